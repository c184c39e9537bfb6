// What ipywidgets leaves without a name, named from the page itself (issue 27). One file for two
// editions: the slides include it (index.html.j2 here) and JupyterLab runs it from the course's
// JupyterLab extension (labextension/index.js), whenever elements are added or removed.
//  - A slider's handle (noUiSlider's element of role slider) is named by the widget's label:
//    ipywidgets gives noUiSlider no name for it (leongersen/noUiSlider#1223).
//  - A live figure (an ipywidgets Image, which has no alt: jupyter/enhancement-proposals#120)
//    gets as its alt the figure in words that course/live.py writes, visually hidden, after the
//    text it prints (or else that text). The hidden words are then hidden from a screen reader
//    too, which would otherwise read them twice.
(function (global) {
  'use strict';

  function nameSliderHandles(root) {
    root.querySelectorAll('.widget-slider .noUi-handle[role=slider]').forEach(function (handle) {
      var label = handle.closest('.widget-slider').querySelector('.widget-label');
      // (ipywidgets hides the label of an emptied description and keeps its old text)
      var name = label && label.style.display !== 'none' ? label.textContent.trim() : '';
      if (name && handle.getAttribute('aria-label') !== name) {
        handle.setAttribute('aria-label', name);
      } else if (!name && handle.hasAttribute('aria-label')) {
        handle.removeAttribute('aria-label');
      }
    });
  }

  function nameLiveFigures(root) {
    root.querySelectorAll('img.live-figure-image').forEach(function (img) {
      var text = img.parentElement.querySelector(':scope > .live-figure-text');
      var words = text && text.querySelector('.live-figure-words');
      var alt = (words || text || {textContent: ''}).textContent.trim();
      if (alt && img.alt !== alt) img.alt = alt;
      if (alt && words && words.getAttribute('aria-hidden') !== 'true') {
        words.setAttribute('aria-hidden', 'true');
      }
    });
  }

  function nameWidgets(root) {
    nameSliderHandles(root);
    nameLiveFigures(root);
  }

  if (typeof module === 'object' && module.exports) {
    module.exports = nameWidgets;        // labextension/index.js
  } else {
    global.courseNameWidgets = nameWidgets;   // the slides
  }
})(this);
