// The SPARQL page: load a shipped query into the editor, run it against /sparql, show a table.
(function () {
  var form = document.getElementById("query-form");
  var editor = document.getElementById("query");
  var results = document.getElementById("results");
  var downloads = document.getElementById("downloads");
  var shipped = JSON.parse(document.getElementById("shipped-queries").textContent);
  document.querySelectorAll("button.load").forEach(function (button) {
    button.addEventListener("click", function () {
      editor.value = shipped[button.dataset.name];
    });
  });
  function text(term) {
    if (!term) { return ""; }
    if (term.type === "triple") { return "<< " + [term.value.subject, term.value.predicate, term.value.object].map(text).join(" ") + " >>"; }
    return term.value;
  }
  // An IRI is a link to what the store says of it (this page, the query run at once).
  function fill(target, term) {
    if (term && term.type === "uri") {
      var link = document.createElement("a");
      var about = "SELECT ?property ?value ?graph WHERE { GRAPH ?graph { <" + term.value + "> ?property ?value } }";
      link.href = "/query?" + new URLSearchParams({query: about}).toString();
      link.textContent = term.value;
      target.appendChild(link);
    } else {
      target.textContent = text(term);
    }
  }
  function run(event) {
    if (event) { event.preventDefault(); }
    var params = new URLSearchParams();
    params.set("query", editor.value);
    if (document.getElementById("union").checked) { params.set("union", "true"); }
    downloads.textContent = "";
    ["csv", "tsv", "json", "xml"].forEach(function (format) {
      var link = document.createElement("a");
      link.href = "/sparql?" + params.toString() + "&format=" + format;
      link.textContent = format.toUpperCase();
      downloads.appendChild(link);
      downloads.appendChild(document.createTextNode(" "));
    });
    fetch("/sparql", {method: "POST", body: params, headers: {"Accept": "application/sparql-results+json"}})
      .then(function (response) { return response.json(); })
      .then(function (data) {
        results.textContent = "";
        if (data.error) { results.textContent = data.error + ": " + data.message; return; }
        if (data.boolean !== undefined) { results.textContent = String(data.boolean); return; }
        var table = document.createElement("table");
        table.id = "result-table";
        var head = table.insertRow();
        data.head.vars.forEach(function (name) { var th = document.createElement("th"); th.textContent = name; head.appendChild(th); });
        data.results.bindings.forEach(function (binding) {
          var row = table.insertRow();
          data.head.vars.forEach(function (name) { fill(row.insertCell(), binding[name]); });
        });
        results.appendChild(table);
      });
  }
  form.addEventListener("submit", run);
  if (form.dataset.run === "yes") { run(); }
})();
