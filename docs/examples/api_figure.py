"""A figure made through the Python API (docs/img/api_example.png).

Top: cwnd, ssthresh and advertised window of scenarios/examples/fluctuating_reader.toml.
Bottom: goodput of rwnd_limited.toml with a 1 MB buffer, NewReno against CUBIC.
Run from the repository root: .venv/bin/python docs/examples/api_figure.py
"""

from matplotlib.figure import Figure

import mobiflow
from mobiflow import plot

reader = mobiflow.Scenario.load("scenarios/examples/fluctuating_reader.toml").run()
base = mobiflow.Scenario.load("scenarios/examples/rwnd_limited.toml").set("tcp.rcv_buf", "1MB")
runs = [base.set("flows.bulk.cc", cc).run(label=cc) for cc in ("newreno", "cubic")]

fig = Figure(figsize=(9, 7.5), layout="constrained")
top, bottom = fig.subplots(2, 1)
plot.windows(
    reader,
    ax=top,
    title="fluctuating_reader (reads <0,6,6> Mb/s, 256 KB buffer): cwnd, ssthresh, rwnd",
)
top.set_xlim(0, 40)
plot.throughput(
    runs,
    smooth=1.0,
    ax=bottom,
    title="rwnd_limited with a 1 MB buffer: goodput, NewReno vs CUBIC (1 s moving average)",
)
plot.save(fig, "docs/img/api_example.png")
print({r.label: round(r.summary["flows"][0]["goodput_bps"] / 1e6, 3) for r in runs})
