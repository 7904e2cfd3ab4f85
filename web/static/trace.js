// Place each highlight box over the page image: positions are percentages of the page size
// (set through the CSSOM: the Content-Security-Policy allows no inline styles).
document.querySelectorAll(".page .box").forEach(function (box) {
  box.style.left = box.dataset.left + "%";
  box.style.top = box.dataset.top + "%";
  box.style.width = box.dataset.width + "%";
  box.style.height = box.dataset.height + "%";
});
