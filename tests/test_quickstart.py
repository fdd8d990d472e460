"""The README's quickstart in a real Jupyter kernel (nbclient), as a newcomer runs it: a `DistributedAgent` on CartPole
trained briefly, then `agent.plot()` in the next cell shows the learning curve as an image (issue 60, trap 7), once."""
import pathlib
import re

import nbformat
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parent.parent


def quickstart_code() -> str:
    "The first python block under README.md's `## Quickstart`, its training shortened to a few thousand env steps."
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert "DistributedAgent" in code and "atrain(" in code, code
    return re.sub(r"atrain\(\s*[\d_]+", "atrain(3_000", code, count=1)


def test_readme_quickstart_plot_shows_an_image(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(quickstart_code()), nbformat.v4.new_code_cell("agent.plot()")]
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outs = nb.cells[-1].outputs
    images = [o for o in outs if o.get("output_type") in ("execute_result", "display_data") and "image/png" in o.get("data", {})]
    assert len(images) == 1, [(o.get("output_type"), list(o.get("data", {}))) for o in outs]  # shown, and only once
    assert (tmp_path / "runs" / "cartpole" / "curve.png").stat().st_size > 0
