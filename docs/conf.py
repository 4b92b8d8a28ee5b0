"""Sphinx configuration of the ssvmlinear documentation.

Build from the repository root:

    python -m sphinx -W --keep-going -b html docs docs/_build/html

The command-line reference is generated here at build time from the usage texts the commands
print, and the gallery runs every example in ``docs/examples/``.
"""
import os
import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent

import ssvmlinear  # noqa: E402  (the installed package: `pip install -e .` or `pip install .`)

# -- Project -----------------------------------------------------------------------------------

project = "ssvmlinear"
author = "the ssvmlinear developers"
copyright = "the ssvmlinear developers"
release = ssvmlinear.__version__
version = ".".join(release.split(".")[:2])

# -- The command-line reference, from the commands' own usage texts ----------------------------


def write_usage_texts():
    """docs/_generated/<command>_usage.txt from the usage texts ssvm-train, ssvm-predict and
    ssvm-convert print (so the reference cannot drift from the commands)."""
    from ssvmlinear import cli, datacache
    out = DOCS / "_generated"
    out.mkdir(exist_ok=True)
    for name, text in (("ssvm_train", cli.TRAIN_USAGE), ("ssvm_predict", cli.PREDICT_USAGE),
                       ("ssvm_convert", datacache.USAGE)):
        text = text.expandtabs(8)
        target = out / f"{name}_usage.txt"
        # rewrite only on change: an unchanged file keeps Sphinx's incremental builds incremental
        if not target.exists() or target.read_text() != text:
            target.write_text(text)


write_usage_texts()

# -- General -----------------------------------------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",                # the reproduction report (benchmarks/report/report.md)
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}

templates_path = ["_templates"]
exclude_patterns = ["_build", "_generated", "examples", "Thumbs.db", ".DS_Store",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip"]
root_doc = "index"
default_role = "literal"          # `x` renders as code, as in the docstrings
nitpicky = False

# autodoc / autosummary
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"        # the signatures show the defaults; numpydoc the types
add_module_names = False

# numpydoc renders the docstrings. The estimators' and solvers' Parameters sections are made from
# the parameters' descriptions (ssvmlinear.params.Param); methods are listed by the class template.
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()
numpydoc_attributes_as_param_list = True

# -- Gallery -----------------------------------------------------------------------------------

# the examples draw without a display
os.environ.setdefault("MPLBACKEND", "agg")

sphinx_gallery_conf = {
    "examples_dirs": str(DOCS / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r"/plot_",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    "min_reported_time": 1,
    "show_memory": False,
    "abort_on_example_error": False,
    "only_warn_on_example_error": False,
    "doc_module": ("ssvmlinear",),
    "backreferences_dir": str(DOCS / "_generated" / "backreferences"),
    "inspect_global_variables": False,
    "capture_repr": (),            # the examples print what they show
}

# -- Docstrings written as plain text ------------------------------------------------------------
#
# The docstrings are numpydoc sections around plain text: formulas such as ``1/2 ||w||^2``,
# fitted attributes such as ``coef_`` and indented displays. Before numpydoc parses them, the hook
# below makes that text safe for reStructuredText without changing what it says: an indented
# display after a text line becomes a literal block, and outside literals ``|``, ``*`` and the
# trailing underscore of a name are escaped. An "Attributes" section written as a sentence
# (rather than as ``name : type`` entries) is shown as a paragraph under its heading.

_PARAM_SECTIONS = {"Parameters", "Other Parameters", "Returns", "Yields", "Receives", "Raises", "Warns",
                   "Attributes", "Methods"}
_VERBATIM_SECTIONS = {"Examples"}
_ENTRY = re.compile(r"^[A-Za-z_][\w.]*( : .*)?$")
_ROLE_SPAN = re.compile(r"(`[^`]+`)")


def _escape_plain(text):
    """reST-escape plain text (outside `role` spans)."""
    parts = _ROLE_SPAN.split(text)
    for k in range(0, len(parts), 2):
        piece = parts[k].replace("\\", "\\\\").replace("|", "\\|").replace("*", "\\*")
        parts[k] = re.sub(r"(?<=[A-Za-z0-9_])_(?![A-Za-z0-9])", r"\\_", piece)
    return "".join(parts)


class _Escaper:
    """Escapes lines outside ``literal`` spans, which may continue from one line to the next."""

    def __init__(self):
        self.inside = False

    def __call__(self, line):
        pieces = line.split("``")
        for k, piece in enumerate(pieces):
            if k:
                self.inside = not self.inside
            if not self.inside:
                pieces[k] = _escape_plain(piece)
        return "``".join(pieces)


def _indent(line):
    return len(line) - len(line.lstrip())


_BULLET = re.compile(r"\s*[-*+]\s+")


def _content_indent(line):
    """Where the text of a line starts: after the marker of a bullet item."""
    m = _BULLET.match(line)
    return len(m.group(0)) if m else _indent(line)


def _free_text(lines):
    """A free-text section: indented displays after a text line become literal blocks."""
    escape = _Escaper()
    out, literal, base = [], False, 0
    for line in lines:
        if literal:
            if not line.strip() or _indent(line) > base:
                out.append(line)
                continue
            literal = False
            if out and out[-1].strip():
                out.append("")
        if line.strip() and out and out[-1].strip() and _indent(line) > _content_indent(out[-1]):
            prev = out[-1].rstrip()
            out[-1] = prev + ":" if prev.endswith(":") and not prev.endswith("::") else (
                prev if prev.endswith("::") else prev + " ::")
            out.append("")
            literal, base = True, _indent(prev)
            out.append(line)
            continue
        out.append(escape(line) if line.strip() else line)
    return out


def _entries(lines):
    """A parameter-like section: entry names as written, their types and descriptions escaped."""
    out, escape = [], _Escaper()
    for line in lines:
        if _indent(line) == 0:          # a new entry (or a blank line)
            escape = _Escaper()
        if line.strip() and _indent(line) == 0:
            name, sep, kind = line.partition(" : ")
            out.append(name + sep + escape(kind))
        else:
            out.append(escape(line) if line.strip() else line)
    return out


def _split_sections(lines):
    """[(title or None, body lines)] by numpydoc's underlined headings."""
    sections, title, body = [], None, []
    i = 0
    while i < len(lines):
        line = lines[i]
        under = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if line.strip() and under and set(under) <= {"-", "="} and len(under) == len(line.strip()):
            sections.append((title, body))
            title, body = line.strip(), []
            i += 2
            continue
        body.append(line)
        i += 1
    sections.append((title, body))
    return sections


def rst_safe_docstring(app, what, name, obj, options, lines):
    if not name.startswith("ssvmlinear"):
        return
    out = []
    for title, body in _split_sections(lines):
        if title == "Attributes":
            first = next((line for line in body if line.strip()), "")
            if not _ENTRY.match(first.strip()):      # a sentence, not entries: a paragraph
                out += ["", ".. rubric:: Attributes", ""] + _free_text(body)
                continue
        if title is not None:
            out += [title, "-" * len(title)]
        if title in _VERBATIM_SECTIONS:
            out += body
        elif title in _PARAM_SECTIONS:
            out += _entries(body)
        else:
            out += _free_text(body)
    lines[:] = out


# scikit-learn's metadata-routing methods (set_fit_request, ...) are documented there; the
# solvers' hooks for the loop, Catalyst and CoCoA+ are for extending the package, not for users
_SKIPPED = re.compile(r"set_\w+_request|get_metadata_routing|start|start_local|accepts|check_params|param"
                      r"|local_\w+|rule_of_rounds|factor_kernel")


def skip_member(app, what, name, obj, skip, options):
    return True if _SKIPPED.fullmatch(name) else None


def setup(app):
    # before numpydoc's own handler (priority 500)
    app.connect("autodoc-process-docstring", rst_safe_docstring, priority=100)
    app.connect("autodoc-skip-member", skip_member)


# -- HTML --------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"ssvmlinear {release}"
html_static_path = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "getting_started": [], "changelog": [], "benchmarks": [], "references": []}
html_show_sourcelink = False
