"""Amdahl's law step by step over a study's phases: predicted against measured.

For each step between consecutive custom stages (`profiler.analyze.phases.custom_stages`: the
study's own stages, in its order, that name their phases and run them one after another), the
phases the step changed are measured, not declared: those whose GPU operations differ
(`phases.changed_phases`). Then, times per repeat (all items):

- P: the changed phases' GPU time in the previous stage over the previous stage's end-to-end
  time in the same (profiled) pass: its host time for all items, median, so the copies, the host
  time and the gaps between kernels are in the denominator as they are in the measured time.
  The prediction assumes everything but the changed phases (the other phases, the copies, the
  host) took the same time in both stages.
- S: the changed phases' local speedup, their summed GPU time before over after.
- predicted: 1 / ((1 - P) + P / S); measured: the staged table's gain, the previous stage's
  unprofiled time over this stage's; the difference in percentage points of gain.
- the same over the network's GPU time alone (its phases, the copies `h2d` and `d2h` aside: P
  over their summed time, their summed time before over after): where these agree and the
  end-to-end ones do not, the difference is outside the network's arithmetic (copies, host,
  noise).

The difference splits exactly in three (`*_pp`, summing to `diff_pp`): what the unchanged
phases moved (the rest of the network was not as unchanged as the prediction assumes), what the
time outside the phases moved (host time, launch gaps between phases: end-to-end time minus the
phases' GPU time), both in the profiled pass, and how the profiler's overhead differs between
the two stages (the profiled pass's gain against the unprofiled one's). Where the difference is
over `EXPLAIN_PP`, the row says which part made it, and whether the stages' min-max spread
covers the prediction (noise).

Blocks: a phase named `<block>/<part>` (`res3.2/tail`) belongs to block `<block>`; the block
table is each block's share of each stage's time and its local speedup at each step.

Pure: DataFrames in, DataFrames out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from profiler import schema
from profiler.analyze.amdahl import gain
from profiler.analyze.phases import COPIES, Phases, changed_phases, collect
from profiler.schema import Column

#: a prediction further than this from the measured gain (percentage points) is explained
EXPLAIN_PP = 1.0
#: changed phases listed by name; more are counted, the first `LIST_PHASES - 1` named
LIST_PHASES = 4
#: an unchanged phase "moved" when its time changed by more than this share of itself
MOVED_PCT = 1.0
#: moved phases named in an explanation: at most this many, each moving at least `NAMED_PCT`
#: of the previous stage's time
MOVED_NAMED, NAMED_PCT = 3, 0.01
#: blocks listed by name in the one sentence; more are counted
LIST_BLOCKS = 8

PHASE_STEPS = schema.Table(
    "phase_amdahl",
    "Per step between consecutive custom stages: the phases it changed, P, S, predicted and "
    "measured whole-network gain. Times are per repeat (all items).",
    (
        Column("prev_stage", "string"),
        Column("stage", "string"),
        Column("changed", "int64", doc="phases whose GPU operations differ"),
        Column("changed_names", "string", doc="the changed phases, compactly"),
        Column("changed_phases", "string", doc="every changed phase, comma-separated"),
        Column("blocks", "string", doc="the changed phases' blocks, compactly (`res3.2-3.4`)"),
        Column("unverified", "int64", doc="phases whose operations the trace could not show"),
        Column("forwards", "float64", doc="forwards (`infer` calls) per repeat, this stage"),
        Column("prev_changed_ns", "float64", "ns", "changed phases' GPU time before"),
        Column("changed_ns", "float64", "ns", "changed phases' GPU time after"),
        Column("prev_kernels", "float64", doc="kernel launches in the changed phases before"),
        Column("kernels", "float64", doc="kernel launches in the changed phases after"),
        Column("prev_rest_ns", "float64", "ns", "the other phases' GPU time before"),
        Column("rest_ns", "float64", "ns", "the other phases' GPU time after"),
        Column("prev_total_ns", "float64", "ns", "previous stage's end-to-end time, profiled"),
        Column("total_ns", "float64", "ns", "this stage's end-to-end time, profiled"),
        Column("prev_outside_ns", "float64", "ns", "end-to-end time not in a phase, before"),
        Column("outside_ns", "float64", "ns", "end-to-end time not in a phase, after"),
        Column("share_pct", "float64", "%", "P: prev_changed_ns over prev_total_ns"),
        Column("speedup", "float64", doc="S: prev_changed_ns / changed_ns"),
        Column("predicted", "float64", doc="1 / ((1 - P) + P / S)"),
        Column("profiled", "float64", doc="prev_total_ns / total_ns: the profiled pass's gain"),
        Column("measured", "float64", doc="the staged table's gain (unprofiled medians)"),
        Column("measured_low", "float64", doc="previous stage's min over this stage's max"),
        Column("measured_high", "float64", doc="previous stage's max over this stage's min"),
        Column("diff_pp", "float64", "pp", "measured minus predicted gain, percentage points"),
        Column("gpu_share_pct", "float64", "%", "P over the network's GPU time (copies aside)"),
        Column("gpu_predicted", "float64", doc="the prediction over the network's GPU time"),
        Column("gpu_measured", "float64", doc="the network's GPU time before over after"),
        Column("rest_pp", "float64", "pp", "of diff_pp: the unchanged phases' move"),
        Column("outside_pp", "float64", "pp", "of diff_pp: the time outside the phases' move"),
        Column("overhead_pp", "float64", "pp", "of diff_pp: measured minus profiled gain"),
        Column("explanation", "string", doc="why they differ, when by more than EXPLAIN_PP"),
    ),
)


def steps(ph: Phases) -> pd.DataFrame:
    """One row per step between consecutive custom stages.

    Returns: DataFrame with `PHASE_STEPS` columns, in study order (empty without two stages).
    """
    rows = [_step(ph, a, b) for a, b in zip(ph.stages, ph.stages[1:], strict=False)]
    out = pd.DataFrame(rows, columns=PHASE_STEPS.names) if rows else schema.empty(PHASE_STEPS)
    return schema.validate(schema.conform(out, PHASE_STEPS), PHASE_STEPS)


def _step(ph: Phases, before: str, after: str) -> dict[str, object]:
    changed, unknown = changed_phases(ph, before, after)
    a, b = ph.times[before].fillna(0.0), ph.times[after].fillna(0.0)
    prev_changed, cur_changed = float(a[changed].sum()), float(b[changed].sum())
    prev_total, cur_total = float(ph.profiled_ns[before]), float(ph.profiled_ns[after])
    share = prev_changed / prev_total if prev_total > 0 else math.nan
    speedup = _ratio(prev_changed, cur_changed) if changed else math.nan
    predicted = gain(share, speedup) if changed else 1.0
    row: dict[str, object] = {
        "prev_stage": before,
        "stage": after,
        "changed": len(changed),
        "changed_names": compact_names(changed),
        "changed_phases": ", ".join(changed),
        "blocks": compact_blocks(changed),
        "unverified": unknown,
        "forwards": float(ph.forwards[after]),
        "prev_changed_ns": prev_changed,
        "changed_ns": cur_changed,
        "prev_kernels": float(ph.kernels.loc[changed, before].sum(min_count=1)),
        "kernels": float(ph.kernels.loc[changed, after].sum(min_count=1)),
        "prev_rest_ns": float(a.sum()) - prev_changed,
        "rest_ns": float(b.sum()) - cur_changed,
        "prev_total_ns": prev_total,
        "total_ns": cur_total,
        "prev_outside_ns": prev_total - float(a.sum()),
        "outside_ns": cur_total - float(b.sum()),
        "share_pct": share * 100.0,
        "speedup": speedup,
        "predicted": predicted,
        "profiled": _ratio(prev_total, cur_total),
        "measured": _ratio(float(ph.total_ns[before]), float(ph.total_ns[after])),
        "measured_low": _ratio(float(ph.min_ns[before]), float(ph.max_ns[after])),
        "measured_high": _ratio(float(ph.max_ns[before]), float(ph.min_ns[after])),
    }
    row.update(_split(row, predicted))
    net = [p for p in a.index if p not in COPIES]  # the network's phases: the copies aside
    net_before, net_after = float(a[net].sum()), float(b[net].sum())
    in_net = float(a[[p for p in changed if p in net]].sum())
    gpu_share = in_net / net_before if net_before > 0 else math.nan
    row.update(gpu_share_pct=100.0 * gpu_share,
               gpu_predicted=_net_prediction(a, b, changed, net),
               gpu_measured=_ratio(net_before, net_after))
    row["explanation"] = explain(row, _moved(ph, before, after, changed))
    return row


def _split(row: dict[str, Any], predicted: float) -> dict[str, float]:
    """measured - predicted (pp) in three parts that sum to it: the profiled pass's gain minus
    the prediction, shared between the unchanged phases' move and the outside time's move in
    proportion to their ns (the gain is linear in this stage's time's difference from the
    predicted time, at fixed ends), and the measured minus the profiled gain (overhead)."""
    prev_total, cur_total = row["prev_total_ns"], row["total_ns"]
    rest = row["rest_ns"] - row["prev_rest_ns"]
    outside = row["outside_ns"] - row["prev_outside_ns"]
    predicted_ns = prev_total / predicted if predicted > 0 else math.nan
    # profiled - predicted = prev/cur - prev/pred = -prev * (cur - pred) / (cur * pred)
    ends = cur_total * predicted_ns  # 0 where the prediction is infinite (predicted_ns 0)
    per_ns = -100.0 * prev_total / ends if ends > 0 else math.nan
    return {
        "diff_pp": (row["measured"] - predicted) * 100.0,
        "rest_pp": per_ns * rest,
        "outside_pp": per_ns * outside,
        "overhead_pp": (row["measured"] - row["profiled"]) * 100.0,
    }


def _net_prediction(a: pd.Series, b: pd.Series, changed: Sequence[str],
                    net: Sequence[str]) -> float:
    """Amdahl over the network's GPU time (phases but the copies): P and S of the changed phases
    that are not copies."""
    mine = [p for p in changed if p in net]
    total = float(a[list(net)].sum())
    if not mine or total <= 0:
        return 1.0
    before, after = float(a[mine].sum()), float(b[mine].sum())
    return gain(before / total, _ratio(before, after))


def _ratio(num: float, den: float) -> float:
    if math.isnan(num) or math.isnan(den):
        return math.nan
    return math.inf if den == 0 else num / den


def _moved(ph: Phases, before: str, after: str, changed: Sequence[str]) -> pd.Series:
    """The unchanged phases both stages have whose GPU time moved by more than `MOVED_PCT`,
    by change (ns per repeat), largest first."""
    both = ph.times[[before, after]].drop(index=list(changed)).dropna()
    delta = both[after] - both[before]
    moved = delta[delta.abs() > both[before].abs() * MOVED_PCT / 100.0]
    return moved.reindex(moved.abs().sort_values(ascending=False).index)


def explain(row: dict[str, Any], moved: pd.Series) -> str:
    """Why measured and predicted differ, when by more than `EXPLAIN_PP` (else ""): the three
    parts of the difference in percentage points, largest first (the unchanged phases' with the
    few that moved most, in % of the previous stage's time), and whether the stages' min-max
    spread covers the prediction."""
    diff = float(row["diff_pp"])
    if math.isnan(diff) or abs(diff) <= EXPLAIN_PP:
        return ""
    prev_total = float(row["prev_total_ns"])
    big = moved[moved.abs() >= prev_total * NAMED_PCT / 100.0].head(MOVED_NAMED)
    named = ", ".join(f"{n} {_signed_pct(d, prev_total)}" for n, d in big.items())
    rest = (f"{row['rest_pp']:+.2f} pp from the phases it did not change ({len(moved)} moved "
            f"by more than {MOVED_PCT:g}%" + (f"; most: {named}" if named else "") + ")")
    parts = [
        (row["rest_pp"], rest),
        (row["outside_pp"], f"{row['outside_pp']:+.2f} pp from the time outside the phases "
                            "(host time, gaps between phases)"),
        (row["overhead_pp"], f"{row['overhead_pp']:+.2f} pp from the profiler's overhead "
                             "(the phase times are profiled, the measured gain is not)"),
    ]
    parts.sort(key=lambda p: abs(p[0]), reverse=True)
    word = "more" if diff > 0 else "less"
    text = f"measured {abs(diff):.2f} pp {word} than predicted: " + "; ".join(p[1] for p in parts)
    text += (f". Over the network's GPU time alone (its phases, the copies aside), Amdahl "
             f"predicts {_gain(row['gpu_predicted'])} and it measured "
             f"{_gain(row['gpu_measured'])}")
    low, high, predicted = row["measured_low"], row["measured_high"], row["predicted"]
    if low <= predicted <= high:
        text += (f". The prediction is inside the stages' min-max spread (measured "
                 f"{_gain(low)} to {_gain(high)}): noise can explain it")
    return text


def _signed_pct(ns: float, total: float) -> str:
    return f"{100.0 * ns / total:+.2f}%" if total > 0 else "n/a"


def _gain(ratio: float) -> str:
    return f"{(ratio - 1.0) * 100.0:+.2f}%"


def compact_names(names: Sequence[str]) -> str:
    """`res3.2/tail, res3.3/tail, res3.4/tail`; past `LIST_PHASES` names, a count and the first
    few (`53 phases: stem, res2.1/conv1, res2.1/conv2, ...`); `none` for none."""
    if not names:
        return "none"
    if len(names) <= LIST_PHASES:
        return ", ".join(names)
    return f"{len(names)} phases: " + ", ".join(names[: LIST_PHASES - 1]) + ", ..."


def block_of(phase: str) -> str:
    """A phase's block: the part of its name before the first `/` (`res3.2/tail` -> `res3.2`);
    a phase without one is a block of its own (`stem`)."""
    return phase.split("/", 1)[0]


_NUMBERED = re.compile(r"(?P<stem>.*?)(?P<major>\d+)\.(?P<minor>\d+)")


def compact_blocks(phases: Sequence[str]) -> str:
    """The blocks of `phases`, in order, runs of consecutive numbered blocks of one layer
    joined: `res3.2, res3.3, res3.4` -> `res3.2-3.4`; `res2.1-2.3, res3.1-3.4, head`."""
    blocks = list(dict.fromkeys(block_of(p) for p in phases))
    out: list[str] = []
    run: list[tuple[str, str, int]] = []  # (stem, major, minor) of the current run
    for block in blocks + [""]:
        m = _NUMBERED.fullmatch(block)
        key = (m["stem"], m["major"], int(m["minor"])) if m else None
        if run and key and key[:2] == run[-1][:2] and key[2] == run[-1][2] + 1:
            run.append(key)
            continue
        if run:
            first, last = run[0], run[-1]
            name = f"{first[0]}{first[1]}.{first[2]}"
            out.append(name if len(run) == 1 else f"{name}-{last[1]}.{last[2]}")
            run = []
        if key:
            run = [key]
        elif block:
            out.append(block)
    if len(out) > LIST_BLOCKS:
        return f"{len(blocks)} blocks (" + ", ".join(out[: LIST_BLOCKS - 1]) + ", ...)"
    return ", ".join(out)


def case_step(table: pd.DataFrame) -> pd.Series | None:
    """The step the one-sentence answer is about: the one that changed the fewest phases (at
    least one; the earliest of a tie): the local change whose whole-network gain is in
    question. None when no step changed a phase."""
    candidates = table[table["changed"] > 0]
    if candidates.empty:
        return None
    return candidates.iloc[int(candidates["changed"].to_numpy().argmin())]


def sentence(row: pd.Series) -> str:
    """The answer in one sentence, with the step's numbers: "fusing res3.2-3.4 made them 14.6%
    faster; they were 12.0% of the network; Amdahl predicts 1.58%; measured 1.31%". The verb is
    `fusing` when the changed phases launch fewer kernels than before, else `changing`."""
    kernels, before = float(row["kernels"]), float(row["prev_kernels"])
    verb = "fusing" if kernels < before else "changing"
    many = int(row["changed"]) > 1 or "," in str(row["blocks"]) or "-" in str(row["blocks"])
    them, they = ("them", "they were") if many else ("it", "it was")
    speedup = float(row["speedup"])
    faster = (f"{(speedup - 1.0) * 100.0:.1f}% faster" if speedup >= 1.0 else
              f"{(1.0 - 1.0 / speedup) * 100.0:.1f}% slower" if speedup > 0 else "no faster")
    if math.isinf(speedup):
        faster = "free (they are gone)"
    return (f"{verb} {row['blocks']} made {them} {faster}; {they} {float(row['share_pct']):.1f}% "
            f"of the network; Amdahl predicts {(float(row['predicted']) - 1.0) * 100.0:.2f}%; "
            f"measured {(float(row['measured']) - 1.0) * 100.0:.2f}%")


def block_times(ph: Phases) -> pd.DataFrame:
    """GPU ns per repeat of each block (a block: phases `<block>/<part>`), rows in network
    order, one column per custom stage; empty when no phase has a `/`."""
    times = ph.times.loc[[p for p in ph.times.index if "/" in p]]
    if times.empty:
        return pd.DataFrame(columns=ph.stages)
    blocks = pd.Index([block_of(p) for p in times.index], name="block")
    return times.groupby(blocks, sort=False).sum(min_count=1)


def block_table(ph: Phases, table: pd.DataFrame) -> pd.DataFrame:
    """Per block: its share of each custom stage's end-to-end time in the profiled pass (P's
    denominator; `share:<stage>`, %), its local speedup at each step (`speedup:<stage>`, the
    previous stage's block time over this one's) and whether the step changed one of its phases
    (`changed:<stage>`).

    Returns: DataFrame indexed by block, network order; empty when no phase has a `/`.
    """
    times = block_times(ph)
    if times.empty:
        return pd.DataFrame()
    out = pd.DataFrame(index=times.index)
    for stage in ph.stages:
        out[f"share:{stage}"] = 100.0 * times[stage] / ph.profiled_ns[stage]
    for row in table.itertuples(index=False):
        changed = {block_of(p) for p in str(row.changed_phases).split(", ") if p}
        out[f"speedup:{row.stage}"] = times[row.prev_stage] / times[row.stage]
        out[f"changed:{row.stage}"] = [b in changed for b in times.index]
    return out


@dataclass(frozen=True)
class PhaseAmdahl:
    """A run's phase-level Amdahl analysis: the phases (`phases.Phases`), the steps
    (`PHASE_STEPS`), the block table (`block_table`; empty without blocks), the step the one
    sentence is about and the sentence (None when no step changed a phase)."""

    phases: Phases
    steps: pd.DataFrame
    blocks: pd.DataFrame
    case: pd.Series | None
    sentence: str | None


def analyse(
    ranges: pd.DataFrame, gpu_trace: pd.DataFrame, stages: pd.DataFrame, model: str | None
) -> PhaseAmdahl | None:
    """The analysis of a run's tables (`model`: the study's name, its stage ranges'
    prefix); None when fewer than two custom stages name their phases (nothing to step)."""
    if not model or ranges.empty or gpu_trace.empty or "range" not in gpu_trace:
        return None
    ph = collect(ranges, gpu_trace, stages, model)
    if ph.empty:
        return None
    table = steps(ph)
    case = case_step(table)
    return PhaseAmdahl(ph, table, block_table(ph, table), case,
                       sentence(case) if case is not None else None)
