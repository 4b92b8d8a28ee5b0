"""README.md's commands and examples, taken from README.md itself so that they cannot drift.

    python .ci/readme.py command main-job     # print the README's main-job command (for bash -c)
    python .ci/readme.py command tests        # print the README's test command
    python .ci/readme.py python               # run the README's Python blocks, in order, in one
                                              # interpreter whose working directory is the repository root
    python .ci/readme.py cli [--update]       # run the README's command-line examples from the
                                              # repository root; compare what they print with the `#>`
                                              # comments that follow them (or rewrite those comments)

A command-line example is a line of a ```sh block of the "Command line" section; the comments
`#> text` on its line and on the lines after it (lines holding only a `#>` comment) are what it
prints, in order, one line each. `cli` fails when the printed lines differ, so the figures in the
README are the ones today's code gives (`--update` writes them after a deliberate change).
"""
import os
import re
import shlex
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
FENCE = re.compile(r"^```(\w*)\s*$")
# the console scripts of the interpreter running this (a venv's bin/, activated or not)
SCRIPTS_FIRST = dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))


def blocks(text):
    """(language, first line number, lines) of every fenced block, with the section it sits in."""
    out, lang, start, body, section = [], None, 0, [], ""
    for k, line in enumerate(text.split("\n")):
        m = FENCE.match(line)
        if lang is None and line.startswith("## "):
            section = line[3:].strip()
        if m and lang is None:
            lang, start, body = m.group(1), k + 1, []
        elif line.startswith("```") and lang is not None:
            out.append((lang, start, body, section))
            lang = None
        elif lang is not None:
            body.append(line)
    return out


def command(name):
    """The README's set-up commands: the sh block after the paragraph naming the job."""
    text = open(README, encoding="utf-8").read()
    intro = {"main-job": "Install and run the main job", "tests": "Install and run the tests"}[name]
    after = text[text.index(intro):]
    lang, _, body, _ = blocks(after)[0]
    assert lang == "sh" and len(body) == 1, f"README: the {name} command must be one sh line"
    return body[0]


def run_python():
    code = "\n\n".join("\n".join(body) for lang, _, body, _ in blocks(open(README, encoding="utf-8").read())
                       if lang == "python")
    # `python -` from the repository root: the source tree comes first on sys.path, as for a user
    r = subprocess.run([sys.executable, "-"], input=code, text=True, cwd=ROOT)
    if r.returncode:
        sys.exit(f"README's Python examples failed (exit {r.returncode})")
    print("README Python examples: OK")


def cli_examples(text):
    """[(line index of the command, command, [(line index, expected output)])]."""
    examples = []
    for lang, start, body, section in blocks(text):
        if lang != "sh" or section != "Command line":
            continue
        for k, line in enumerate(body):
            cmd, _, comment = line.partition("#")
            expected = comment[1:].strip() if comment.startswith(">") else None
            if cmd.strip():
                examples.append((start + k, cmd.strip(), []))
            if expected is not None:
                examples[-1][2].append((start + k, expected))
    return examples


def run_cli(update):
    text = open(README, encoding="utf-8").read()
    lines = text.split("\n")
    bad = 0
    for _, cmd, expected in cli_examples(text):
        r = subprocess.run(shlex.split(cmd), cwd=ROOT, capture_output=True, text=True, env=SCRIPTS_FIRST)
        got = [ln for ln in r.stdout.split("\n") if ln.strip()]
        if r.returncode:
            sys.exit(f"README example failed (exit {r.returncode}): {cmd}\n{r.stderr}")
        if update:
            if len(got) != len(expected):
                sys.exit(f"README: `{cmd}` prints {len(got)} lines but has {len(expected)} `#>` lines:\n"
                         + "\n".join(got))
            for (k, _), new in zip(expected, got):
                head = lines[k].split("#>")[0]
                lines[k] = f"{head}#> {new}"
        elif got != [e for _, e in expected]:
            bad += 1
            print(f"README example `{cmd}` prints\n  " + "\n  ".join(got) + "\nbut README.md says\n  "
                  + "\n  ".join(e for _, e in expected), file=sys.stderr)
        print(f"ran: {cmd}")
    if update:
        with open(README, "w", encoding="utf-8") as fh:
            fh.write("\n".join(lines))
    elif bad:
        sys.exit(f"{bad} README example(s) print other figures than README.md says "
                 "(run `python .ci/readme.py cli --update` after a deliberate change)")
    print("README command-line examples: OK")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["command"] and len(args) == 2:
        print(command(args[1]))
    elif args == ["python"]:
        run_python()
    elif args[:1] == ["cli"] and args[1:] in ([], ["--update"]):
        run_cli(update=args[1:] == ["--update"])
    else:
        sys.exit(__doc__)
