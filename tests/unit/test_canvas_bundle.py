"""The canvas's JavaScript: small modules in the package, joined into the one module anywidget
loads, the same text every time, every module in it once (the browser tests in tests/e2e run it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from toolkit.widgets.bundle import BundleError, bundle
from toolkit.widgets.canvas import Canvas

FOLDER = Path(__file__).resolve().parents[2] / "toolkit" / "widgets" / "canvas_js"


def test_the_canvas_module_is_joined_the_same_every_time_from_every_module():
    text = bundle(FOLDER, "canvas.js")
    assert text == bundle(FOLDER, "canvas.js") == str(Canvas._esm)
    headers = re.findall(r"^// (\S+\.js)$", text, re.M)
    assert sorted(headers) == sorted(p.name for p in FOLDER.glob("*.js"))  # no module left out, none twice
    assert headers[-1] == "canvas.js" and headers.index("dom.js") < headers.index("picture.js")
    assert not re.search(r"^\s*import\b", text, re.M)
    assert len(re.findall(r"^export\b", text, re.M)) == 1  # export default { render }


@pytest.mark.skipif(shutil.which("node") is None, reason="node checks the joined module's syntax")
def test_the_joined_module_is_valid_javascript(tmp_path):
    path = tmp_path / "canvas.mjs"
    path.write_text(bundle(FOLDER, "canvas.js"), encoding="utf-8")
    subprocess.run(["node", "--check", str(path)], check=True, capture_output=True)


IMPORT_B = 'import { b } from "./b.js";\n'


@pytest.mark.parametrize(
    "files, message",
    [
        ({"a.js": IMPORT_B, "b.js": 'import { a } from "./a.js";\nexport const b = 1;\n'}, "a.js -> b.js -> a.js"),
        ({"a.js": 'import { c } from "./b.js";\n', "b.js": "export const b = 1;\n"}, "b.js does not export c"),
        ({"a.js": 'import b from "./b.js";\n', "b.js": "export default 1;\n"}, "an import other than"),
        ({"a.js": IMPORT_B, "b.js": "export const b = 1;\nexport default b;\n"}, "only the entry"),
        ({"a.js": 'import { b } from "./nowhere.js";\n'}, "no module nowhere.js"),
    ],
)
def test_what_the_joiner_does_not_handle_is_refused_with_where(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    with pytest.raises(BundleError, match=re.escape(message)):
        bundle(tmp_path, "a.js")
