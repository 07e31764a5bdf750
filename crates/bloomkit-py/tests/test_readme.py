"""The README's Python example runs as written."""

import re
import subprocess

from conftest import ROOT


def test_the_readme_python_example_runs(tmp_path, cli, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Python"):readme.index("## The library")]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], "README.md", "exec"), {})
    assert (tmp_path / "users.bloom").exists()
    out = subprocess.run([str(cli), "check", "users.bloom", "alice"], capture_output=True, text=True)
    assert out.stdout == "alice\tmaybe\n"
