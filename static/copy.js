// restorewatch: the "Copy" button beside a script. The page works without
// it (the script is selectable text and a .sql download); with it, one
// click puts the whole script on the clipboard. Served from 'self', so the
// CSP needs no inline script.
"use strict";
document.querySelectorAll("button[data-copy]").forEach(function (btn) {
  var target = document.getElementById(btn.dataset.copy);
  if (!target || !navigator.clipboard) return;
  btn.hidden = false;
  btn.addEventListener("click", function () {
    navigator.clipboard.writeText(target.textContent).then(function () {
      btn.textContent = "Copied";
      setTimeout(function () { btn.textContent = "Copy"; }, 2000);
    }, function () {
      btn.textContent = "Select the text to copy";
    });
  });
});
