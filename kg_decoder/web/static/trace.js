// Place each highlight box over the page image: positions are percentages of the page size
// (set through the CSSOM: the Content-Security-Policy allows no inline styles).
document.querySelectorAll(".page .box").forEach(function (box) {
  box.style.left = box.dataset.left + "%";
  box.style.top = box.dataset.top + "%";
  box.style.width = box.dataset.width + "%";
  box.style.height = box.dataset.height + "%";
});

// Page pictures queued in data-src (a trace, a search or a diff shows several): drawn two at a time,
// as the server lets one client draw two pages at once (more at once would be answered 503 busy).
// A picture that fails (busy beside another tab, a server restarting) is asked for again, later each
// time, three times at most.
var RETRIES = 3;
function loadNext() {
  var image = document.querySelector("img[data-src]");
  if (!image) { return; }
  var source = image.dataset.src;
  var tried = 0;
  image.removeAttribute("data-src");
  // One listener of each kind a picture: it goes on to the next picture once, drawn or given up.
  image.addEventListener("load", loadNext, { once: true });
  image.addEventListener("error", function retry() {
    if (tried >= RETRIES) { image.removeEventListener("load", loadNext); loadNext(); return; }
    tried += 1;
    setTimeout(function () {
      image.addEventListener("error", retry, { once: true });
      image.src = source + (source.indexOf("?") < 0 ? "?" : "&") + "retry=" + tried;
    }, 500 * Math.pow(2, tried - 1));
  }, { once: true });
  image.src = source;
}
loadNext();
loadNext();

// The fact form keeps a literal's datatype or language in hidden fields: once the object's text is
// edited, or the object made an IRI, they no longer belong to it and are not sent.
(function () {
  var form = document.getElementById("by-fact");
  if (!form) { return; }
  var object = form.querySelector("input[name=o]");
  var typed = form.querySelectorAll("input[type=hidden][name=datatype], input[type=hidden][name=language]");
  function untype() {
    var iri = form.querySelector("input[name=object][value=iri]").checked;
    typed.forEach(function (field) { field.disabled = iri || object.value !== object.defaultValue; });
  }
  form.addEventListener("input", untype);
  form.addEventListener("change", untype);
})();
