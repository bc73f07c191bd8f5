"""Print a serving run's points compactly (one line each) from its serve_points.csv:
`python3 scripts/serve_ab/summary.py TAG RUN_DIR`."""

import sys
from pathlib import Path

import pandas as pd

tag, run = sys.argv[1], Path(sys.argv[2])
p = pd.read_csv(run / "serve_points.csv")
print(f"-- {tag}: {run.name}")
HEAD = "point | items/s | p50 us | p99 us | ovh p50 us | ovh % p50 | busy % | batch | offline/s"
print(HEAD + " | off/served | Little | flag")
for _, r in p.iterrows():
    share = 100 * r["overhead_p50_ns"] / r["p50_ns"]
    ratio = r["offline_items_per_s"] / r["items_per_s"] if r["items_per_s"] else float("nan")
    flag = str(r["flag"]) if isinstance(r["flag"], str) else ""
    print(
        f"{r['point']} | {r['items_per_s']:,.0f} | {r['p50_ns'] / 1e3:.1f} | "
        f"{r['p99_ns'] / 1e3:.1f} | "
        f"{r['overhead_p50_ns'] / 1e3:.1f} | {share:.1f} | {r['gpu_busy_pct']:.1f} | "
        f"{r['batch_mean']:.1f} | {r['offline_items_per_s']:,.0f} | {ratio:.2f} | "
        f"{r['littles_ratio']:.4f} | {flag[:60]}"
    )

# with --keep-records: per request, the overhead's two sides (host ns between the dispatch stamp
# and the batch's first device event; between its last device event and the reply), medians;
# both are shifted by the same clock-alignment error (opposite signs), their sum is exact
for npz in sorted((run / "raw" / "serve").glob("*.npz")):
    import numpy as np

    a = np.load(npz)
    batch = a["request_batch"]
    pre = a["batch_h2d_ns"][batch] - a["request_dispatch_ns"]
    post = a["request_reply_ns"] - a["batch_end_ns"][batch]
    idle = a["request_dispatch_ns"] - a["request_arrive_ns"]
    print(
        f"  {npz.stem}: dispatch->first event {np.median(pre) / 1e3:.1f} us, last event->reply "
        f"{np.median(post) / 1e3:.1f} us, arrive->dispatch {np.median(idle) / 1e3:.1f} us"
    )
