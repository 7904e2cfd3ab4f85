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
  function cell(term) {
    if (!term) { return ""; }
    if (term.type === "triple") { return "<< " + [term.value.subject, term.value.predicate, term.value.object].map(cell).join(" ") + " >>"; }
    return term.value;
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
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
          data.head.vars.forEach(function (name) { row.insertCell().textContent = cell(binding[name]); });
        });
        results.appendChild(table);
      });
  });
})();
