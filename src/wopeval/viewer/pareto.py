"""The pareto page's plot: success rate against cost per success across runs, drawn on the server
as inline SVG (no script): each run a numbered dot with its intervals as error bars (vertical: the
success rate's; horizontal: the cost per success's, an arrow when unbounded or cut at the axis),
the frontier's runs filled and joined by a step line. A run with no success has no cost per
success: it is listed beside the plot, never drawn at 0."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from wopeval.grading.efficiency import figure
from wopeval.service.efficiency import ParetoRow

DOT = "#2563eb"
OFF = "#8a93a3"


LEGEND = "y: success rate · bars: 95% intervals · filled: on the frontier"


def _bar(x1: float, y1: float, x2: float, y2: float, kind: str, colour: str) -> str:
    return (f'<line class="{kind}" x1="{x1:.1f}" x2="{x2:.1f}" y1="{y1:.1f}" y2="{y2:.1f}" '
            f'stroke="{colour}" stroke-width="1.5"/>')  # fmt: skip


def _arrow(end: float, py: float, colour: str) -> str:
    return (f'<path d="M{end - 6:.1f},{py - 4:.1f} L{end:.1f},{py:.1f} L{end - 6:.1f},'
            f'{py + 4:.1f}" fill="none" stroke="{colour}"/>')  # fmt: skip


def _dot(px: float, py: float, number: int, row: ParetoRow) -> str:
    """The run's dot (filled on the frontier), its number beside it, its id on hover."""
    colour = DOT if row.frontier else OFF
    fill = colour if row.frontier else "#fff"
    title = Markup.escape(f"#{number} {row.run_id} ({row.agent_id})")
    kind = "run front" if row.frontier else "run"
    return (f'<circle class="{kind}" cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{fill}" '
            f'stroke="{colour}" stroke-width="2"><title>{title}</title></circle>'
            f'<text x="{px + 7:.1f}" y="{py - 7:.1f}" font-size="11">#{number}</text>')  # fmt: skip


def _frontier_path(points: list[tuple[float, float]]) -> str:
    """The frontier's runs joined by a dashed step line, cheapest first (none for one run)."""
    if len(points) < 2:
        return ""
    ordered = sorted(points)
    steps = [ordered[0]]
    for px, py in ordered[1:]:
        steps += [(px, steps[-1][1]), (px, py)]
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{px:.1f},{py:.1f}" for i, (px, py) in enumerate(steps)
    )
    return (f'<path id="frontier" d="{path}" fill="none" stroke="{DOT}" stroke-opacity="0.4" '
            'stroke-dasharray="4 3"/>')  # fmt: skip


def _x_max(rows: Sequence[ParetoRow]) -> float:
    """The x axis' end: past every finite upper bound, but no further than four times the
    dearest point (so one wide interval does not squash the points; a bar cut there ends in an
    arrow), with a margin."""
    points = [float(r.efficiency.cost_per_success) for r in rows
              if r.efficiency.cost_per_success is not None]  # fmt: skip
    highs = [span.high for r in rows if (span := r.efficiency.cost_interval) is not None
             and span.high is not None and r.efficiency.cost_per_success is not None]  # fmt: skip
    top = min(max([*points, *highs], default=0.0), 4 * max(points, default=0.0))
    return top * 1.08 if top > 0 else 1.0


def pareto_plot(rows: Sequence[ParetoRow], width: int = 640, height: int = 360) -> Markup:
    """The scatter (see the module docstring)."""
    left, top, w, h = 52.0, 14.0, width - 72.0, height - 62.0
    x_max = _x_max(rows)

    def x(value: float) -> float:
        return left + w * min(value, x_max) / x_max

    def y(value: float) -> float:
        return top + h * (1.0 - value)

    parts: list[str] = []
    for i in range(5):
        v = i / 4
        parts.append(f'<line x1="{left}" x2="{left + w}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                     f'stroke="#e6e9ef"/><text x="{left - 6}" y="{y(v) + 4:.1f}" '
                     f'text-anchor="end" font-size="10">{v:.2f}</text>')  # fmt: skip
        c = x_max * v
        parts.append(f'<text x="{x(c):.1f}" y="{top + h + 14}" text-anchor="middle" '
                     f'font-size="10">{figure(c)}</text>')  # fmt: skip
    frontier: list[tuple[float, float]] = []
    for number, row in enumerate(rows, 1):
        eff = row.efficiency
        cost, rate, rate_span = eff.cost_per_success, eff.success_rate, eff.success_interval
        if cost is None or rate is None or rate_span is None:
            continue
        px, py = x(float(cost)), y(float(rate))
        colour = DOT if row.frontier else OFF
        span = eff.cost_interval
        if span is not None:
            high = x_max if span.high is None else span.high
            parts.append(_bar(x(span.low), py, x(high), py, "xbar", colour))
            if high >= x_max:  # unbounded or past the axis: an arrowhead at its end
                parts.append(_arrow(x(x_max), py, colour))
        rate_high = 1.0 if rate_span.high is None else rate_span.high
        parts.append(_bar(px, y(rate_high), px, y(rate_span.low), "ybar", colour))
        parts.append(_dot(px, py, number, row))
        if row.frontier:
            frontier.append((px, py))
    parts.insert(0, _frontier_path(frontier))
    parts.append(f'<text x="{left + w / 2:.1f}" y="{height - 16}" text-anchor="middle" '
                 'font-size="11" fill="#5b6474">cost per success (USD)</text>'
                 f'<text x="{left}" y="{height - 4}" font-size="11" fill="#5b6474">'
                 f"{LEGEND}</text>")  # fmt: skip
    return Markup(
        f'<svg id="pareto-plot" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="success rate against cost per success">{"".join(parts)}</svg>'
    )


__all__ = ["pareto_plot"]
