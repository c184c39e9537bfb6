// The course's JupyterLab extension (issue 27): JupyterLab's part of what the slides already do,
// from the same file. It names what ipywidgets leaves without a name in a notebook's outputs:
// each slider's handle by its label, each live figure by its words (see widget-names.js). It
// runs whenever elements are added or removed, as the slides' script does: a redrawn figure or
// a new output is named as soon as JupyterLab draws it. (Not on a change of style alone, which
// JupyterLab makes all the time: a description emptied by code, which hides its label by its
// style, loses its name at the next change of elements. The course empties none.)
//
// Built, not edited: `python3 dev.py labextension` writes prebuilt/ (committed, so that a
// learner's `python3 dev.py setup` needs no Node.js); dev.py and the hub's --setup copy it where
// JupyterLab finds prebuilt extensions, <venv>/share/jupyter/labextensions/<its name>/.
var nameWidgets = require('../presentation/voila/templates/course-slides/static/widget-names.js');

module.exports = {
  id: 'attention-notebooks-jupyterlab:widget-names',
  description: 'Names sliders\' handles and live figures of the attention-notebooks course.',
  autoStart: true,
  activate: function () {
    new MutationObserver(function () { nameWidgets(document.body); })
      .observe(document.body, {childList: true, subtree: true});
    nameWidgets(document.body);
  }
};
