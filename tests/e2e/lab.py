"""Browser machinery shared by the end-to-end test and the README screenshots.

- :class:`JupyterLab`: a headless JupyterLab on 127.0.0.1 (free port, a token, no browser,
  its own config/runtime/settings/workspaces dirs) over a temporary copy of ``notebooks/``.
- :func:`chromium_path` / :func:`open_browser`: Debian's ``chromium`` driven by Playwright
  (``executable_path``: Playwright's own browser download is not used), headless, with a
  fresh profile and no background networking.
- :func:`open_notebook`, :func:`run_all_cells`: what a person does in the Lab UI.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from processes import free_port, wait_until_ready

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
ARTIFACTS = ROOT / "tests" / "artifacts"

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]
# Lab plugins that would reach for the network or pop notifications over the page.
DISABLED_PLUGINS = ["@jupyterlab/apputils-extension:announcements", "@jupyterlab/extensionmanager-extension:plugin"]
SKIP_VARIABLE = "COLLAB_SKIP_BROWSER"
# The notebook on screen: the browser tests share one Lab, which keeps earlier notebooks open in hidden tabs.
CURRENT = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def chromium_path() -> str | None:
    """The system Chromium (``/usr/bin/chromium`` on Debian), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def missing_browser_message() -> str:
    return (
        "Chromium is not installed, so the browser test cannot run. `make test` installs it with apt-get "
        "when run as root; otherwise install it ('sudo apt-get install chromium') or set "
        f"{SKIP_VARIABLE}=1 to skip the browser test on a machine without a browser."
    )


class JupyterLab:
    """``jupyter lab`` as a subprocess serving a temporary copy of the notebooks."""

    def __init__(self, workdir: Path, notebooks: Path = NOTEBOOKS):
        self.workdir = Path(workdir)
        self.root = self.workdir / "notebooks"
        self.notebooks = notebooks
        self.token = secrets.token_hex(16)
        self.port: int | None = None
        self.proc: subprocess.Popen | None = None
        self.log_path = self.workdir / "jupyterlab.log"

    def url(self, path: str = "", workspace: str | None = None) -> str:
        """The Lab page opening ``path``; a named ``workspace`` starts from a clean layout
        (no tabs left open by an earlier test in the same Lab)."""
        where = f"workspaces/{workspace}/tree" if workspace else "tree"
        return f"http://127.0.0.1:{self.port}/lab/{where}/{path}?token={self.token}"

    def _environment(self) -> dict:
        config = self.workdir / "jupyter-config"
        (config / "labconfig").mkdir(parents=True, exist_ok=True)
        (config / "labconfig" / "page_config.json").write_text(
            json.dumps({"disabledExtensions": {name: True for name in DISABLED_PLUGINS}})
        )
        settings = self.workdir / "lab-settings" / "@jupyterlab" / "notebook-extension"
        settings.mkdir(parents=True, exist_ok=True)
        (settings / "tracker.jupyterlab-settings").write_text(json.dumps({"autoStartDefaultKernel": True}))
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTER_RUNTIME_DIR": str(self.workdir / "runtime"),
            "IPYTHONDIR": str(self.workdir / "ipython"),
            "PYTHONUNBUFFERED": "1",
        }
        env.pop("JUPYTER_TOKEN", None)
        return env

    def start(self, timeout: float = 120) -> JupyterLab:
        shutil.copytree(self.notebooks, self.root, ignore=shutil.ignore_patterns("exports", ".ipynb_checkpoints"))
        env = self._environment()
        for _ in range(3):  # a free port can be taken between the probe and the bind: retry
            self.port = free_port()
            log = open(self.log_path, "ab")
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "jupyterlab",
                    "--no-browser",
                    "--ServerApp.open_browser=False",
                    "--ServerApp.ip=127.0.0.1",
                    f"--ServerApp.port={self.port}",
                    "--ServerApp.port_retries=0",
                    "--ServerApp.allow_root=True",
                    f"--IdentityProvider.token={self.token}",
                    f"--ServerApp.root_dir={self.root}",
                    f"--LabApp.user_settings_dir={self.workdir / 'lab-settings'}",
                    f"--LabApp.workspaces_dir={self.workdir / 'lab-workspaces'}",
                    "--LabApp.news_url=None",
                    "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                    "--LabApp.extension_manager=readonly",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.root,
            )
            log.close()
            if self._wait_ready(timeout):
                return self
            self.stop()
        raise RuntimeError(f"JupyterLab did not start; its log:\n{self.log()}")

    def _wait_ready(self, timeout: float) -> bool:
        return wait_until_ready(
            self.proc,
            f"http://127.0.0.1:{self.port}/api/status",
            timeout,
            headers={"Authorization": f"token {self.token}"},
            interval=0.2,
        )

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-6000:]
        except OSError:
            return ""

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()  # jupyter shuts its kernels down on SIGTERM
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextmanager
def open_browser(profile_dir: Path, width: int = 1500, height: int = 1000):
    """A Playwright page in the system Chromium with a fresh profile."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise RuntimeError(missing_browser_message())
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile_dir),
            executable_path=executable,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": width, "height": height},
            device_scale_factor=1,
        )
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(60_000)
            yield page
        finally:
            context.close()


def open_notebook(page, lab: JupyterLab, name: str) -> None:
    """Open ``name`` in Lab, wait until its kernel is idle, hide the left sidebar."""
    page.goto(lab.url(name, workspace=Path(name).stem), wait_until="domcontentloaded")
    page.locator(f"{CURRENT} .jp-Cell").first.wait_for(state="visible", timeout=90_000)
    wait_idle(page)
    page.locator(f"{CURRENT} .jp-Cell").first.click()
    page.keyboard.press("Escape")  # command mode
    if page.locator("#jp-left-stack").is_visible():
        page.keyboard.press("Control+b")  # View > Show Left Sidebar: more room for the widgets


_STATUS = "() => (document.querySelector('#jp-main-statusbar') || {}).innerText || ''"


def kernel_status(page) -> str:
    """The kernel status the status bar shows (``Python 3 (ipykernel) | Idle``)."""
    return page.evaluate(_STATUS)


def wait_idle(page, timeout_ms: int = 120_000) -> None:
    """Wait until the status bar says the notebook's kernel is idle (a started kernel, not
    "No Kernel") and no cell is waiting to run."""
    page.wait_for_function(
        "() => { const s = (document.querySelector('#jp-main-statusbar') || {}).innerText || '';"
        " const busy = [...document.querySelectorAll('.jp-NotebookPanel .jp-InputPrompt')]"
        "   .some(p => p.innerText.includes('*'));"
        " return /ipykernel\\)\\s*\\|\\s*Idle/.test(s) && !busy; }",
        timeout=timeout_ms,
        polling=250,
    )


def run_all_cells(page) -> None:
    """Run > Run All Cells, through the menu bar like a person."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.locator(".lm-Menu-content .lm-Menu-itemLabel", has_text="Run All Cells").first.click()
