"""Several ES modules shipped in the package, joined into the one module anywidget loads.

anywidget hands the browser a widget's ``_esm`` as one module's text, so a relative
``import … from "./picture.js"`` would have nothing to resolve against. The canvas's
JavaScript is kept as small modules by responsibility (``canvas_js/``) and joined here, when
the widget class is defined: no build step, no network, the same text every time.

The modules use a small part of the syntax, which this joiner checks rather than parses:
imports are ``import { a, b } from "./name.js";`` and exports are ``export function``,
``export const`` or ``export class`` at the start of a line; only the entry module has an
``export default``. Each imported module becomes a function scope that returns its exports,
placed before the modules that import it (depth first, in import order), so names do not
clash across modules and each module runs once.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "twice.js").write_text("export function twice(x) { return 2 * x; }\\n")
>>> _ = (folder / "main.js").write_text('import { twice } from "./twice.js";\\nexport default twice(21);\\n')
>>> print(bundle(folder, "main.js"))
// twice.js
const twice_js = (() => {
function twice(x) { return 2 * x; }
return { twice };
})();
<BLANKLINE>
// main.js
const { twice } = twice_js;
export default twice(21);
<BLANKLINE>
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["bundle", "BundleError"]

_IMPORT = re.compile(r'^import\s*\{([^}]*)\}\s*from\s*"\./([\w.-]+\.js)";[ \t]*\n', re.M)
_EXPORT = re.compile(r"^export (?=(?:async )?(?:function\*?|const|let|class) )", re.M)
_EXPORTED = re.compile(r"^export (?:async )?(?:function\*?|const|let|class) ([A-Za-z_$][\w$]*)", re.M)


class BundleError(ValueError):
    """The modules use something the joiner does not handle (it says what and where)."""


def _scope(name: str) -> str:
    return re.sub(r"\W", "_", name)


def _imports(name: str, text: str) -> list[tuple[str, list[str]]]:
    out = []
    for match in _IMPORT.finditer(text):
        names = [n.strip() for n in match.group(1).split(",") if n.strip()]
        if not all(re.fullmatch(r"[A-Za-z_$][\w$]*", n) for n in names):
            raise BundleError(f"{name}: import only plain names ({match.group(0).strip()})")
        out.append((match.group(2), names))
    left = _IMPORT.sub("", text)
    if re.search(r"^\s*import\b", left, re.M):
        raise BundleError(f'{name}: an import other than `import {{ … }} from "./module.js";`')
    return out


def bundle(folder: Path, entry: str) -> str:
    """The modules of ``folder`` reachable from ``entry``, as one ES module's text."""
    texts: dict[str, str] = {}
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise BundleError(f"modules import each other: {' -> '.join([*visiting, name])}")
        path = folder / name
        if not path.is_file():
            raise BundleError(f"{visiting[-1] if visiting else entry}: no module {name} in {folder}")
        texts[name] = path.read_text(encoding="utf-8")
        visiting.append(name)
        for imported, _names in _imports(name, texts[name]):
            visit(imported)
        visiting.pop()
        order.append(name)

    visit(entry)
    exported = {name: _EXPORTED.findall(text) for name, text in texts.items()}
    parts = []
    for name in order:
        text = texts[name]
        lets = []
        for imported, names in _imports(name, text):
            missing = [n for n in names if n not in exported[imported]]
            if missing:
                raise BundleError(f"{name}: {imported} does not export {', '.join(missing)}")
            lets.append(f"const {{ {', '.join(names)} }} = {_scope(imported)};\n")
        body = "".join(lets) + _IMPORT.sub("", text)
        if name == entry:
            parts.append(f"// {name}\n{body}")
            continue
        if "export default" in body:
            raise BundleError(f"{name}: only the entry module ({entry}) has an export default")
        body = _EXPORT.sub("", body)
        if re.search(r"^\s*export\b", body, re.M):
            raise BundleError(f"{name}: an export other than `export function|const|let|class name`")
        returned = ", ".join(exported[name])
        parts.append(f"// {name}\nconst {_scope(name)} = (() => {{\n{body}return {{ {returned} }};\n}})();\n")
    return "\n".join(parts)
