"""Inline SVG plots drawn on the server (no script, no CDN): pass@k and pass^k against k, each
with its confidence interval as a band (:mod:`wopeval.viewer.bands`)."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

AT_COLOUR = "#2563eb"
HAT_COLOUR = "#d97706"


def _x(k: int, n: int, left: float, width: float) -> float:
    return left + (width * (k - 1) / (n - 1) if n > 1 else width / 2)


def _y(value: float, top: float, height: float) -> float:
    return top + height * (1.0 - value)


def _path(points: Sequence[tuple[float, float]]) -> str:
    return " ".join(f"{'M' if i == 0 else 'L'}{x:.1f},{y:.1f}" for i, (x, y) in enumerate(points))


def _interval_band(
    rows: Sequence[tuple[float, float, float]], colour: str, top: float, h: float, dx: float = 0
) -> str:
    """A filled band between each x's (low, high), drawn under the curve; for one x, a whisker
    moved ``dx`` aside (pass@1 and pass^1 are one value: their whiskers stand side by side)."""
    if len(rows) == 1:
        x, low, high = rows[0]
        x += dx
        return (f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{_y(high, top, h):.1f}" '
                f'y2="{_y(low, top, h):.1f}" stroke="{colour}" stroke-opacity="0.45" '
                'stroke-width="3"/>')  # fmt: skip
    upper = [(x, _y(high, top, h)) for x, _, high in rows]
    lower = [(x, _y(low, top, h)) for x, low, _ in reversed(rows)]
    return (f'<path class="ci" d="{_path(upper + lower)} Z" fill="{colour}" fill-opacity="0.12" '
            'stroke="none"/>')  # fmt: skip


def sparkline(
    curve: Sequence[tuple[int, float, float]],
    bands: Sequence[tuple[int, float, float, float, float]] = (),
    width: int = 90,
    height: int = 26,
) -> Markup:
    """A task's pass@k (blue) and pass^k (amber) for k = 1..n, in a small box, over their
    95 % interval bands when ``bands`` are given."""
    n = len(curve)
    if n == 0:
        return Markup("")
    at = [(_x(k, n, 2, width - 4), _y(a, 2, height - 4)) for k, a, _ in curve]
    hat = [(_x(k, n, 2, width - 4), _y(h, 2, height - 4)) for k, _, h in curve]
    title = "; ".join(f"k={k}: pass@k {a:.3f}, pass^k {h:.3f}" for k, a, h in curve[:12])
    shade = ""
    if bands:
        xs = [_x(k, n, 2, width - 4) for k, *_ in bands]
        shade = _interval_band(
            [(x, b[1], b[2]) for x, b in zip(xs, bands, strict=True)], AT_COLOUR, 2, height - 4, -2
        ) + _interval_band(
            [(x, b[3], b[4]) for x, b in zip(xs, bands, strict=True)], HAT_COLOUR, 2, height - 4, 2
        )
        title += " (95% intervals shaded)"
    return Markup(
        f'<svg class="spark" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img">'
        f"<title>{Markup.escape(title)}</title>"
        f'<rect x="0" y="0" width="{width}" height="{height}" fill="#f7f8fa"/>{shade}'
        f'<path d="{_path(at)}" fill="none" stroke="{AT_COLOUR}" stroke-width="1.5"/>'
        f'<path d="{_path(hat)}" fill="none" stroke="{HAT_COLOUR}" stroke-width="1.5"/>'
        f"{_dots(at, AT_COLOUR, 1.6)}{_dots(hat, HAT_COLOUR, 1.6)}</svg>"
    )


def _dots(points: Sequence[tuple[float, float]], colour: str, r: float) -> str:
    return "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r}" fill="{colour}"/>' for x, y in points
    )


def _band(rows: Sequence[tuple[float, float, float]], colour: str, top: float, h: float) -> str:
    """A mean line with a ±1 standard-error band (kept inside [0, 1]), a dot at each k."""
    upper = [(x, max(y - s, top)) for x, y, s in rows]
    lower = [(x, min(y + s, top + h)) for x, y, s in reversed(rows)]
    band = _path(upper + lower) + " Z"
    line = _path([(x, y) for x, y, _ in rows])
    return (
        f'<path d="{band}" fill="{colour}" fill-opacity="0.15" stroke="none"/>'
        f'<path d="{line}" fill="none" stroke="{colour}" stroke-width="2"/>'
        + _dots([(x, y) for x, y, _ in rows], colour, 3)
    )


def suite_plot(
    curve: Sequence[tuple[int, float, float, float, float]],
    bands: Sequence[tuple[int, float, float, float, float]] = (),
    width: int = 520,
    height: int = 220,
) -> Markup:
    """The suite's mean pass@k and pass^k over tasks against k, in their 95 % interval bands
    (``bands``: the task as the unit), or ±1 clustered standard error without them."""
    n = len(curve)
    if n == 0:
        return Markup("")
    left, top, w, h = 40.0, 12.0, width - 60.0, height - 44.0
    at = [(_x(k, n, left, w), _y(a, top, h), h * se) for k, a, se, _, _ in curve]
    hat = [(_x(k, n, left, w), _y(b, top, h), h * se) for k, _, _, b, se in curve]
    if bands:
        xs = [_x(k, n, left, w) for k, *_ in bands]
        drawn = (
            _interval_band(
                [(x, b[1], b[2]) for x, b in zip(xs, bands, strict=True)], AT_COLOUR, top, h, -4
            )
            + _line(at, AT_COLOUR)
            + _interval_band(
                [(x, b[3], b[4]) for x, b in zip(xs, bands, strict=True)], HAT_COLOUR, top, h, 4
            )
            + _line(hat, HAT_COLOUR)
        )
        band_text = "band: 95% interval over tasks"
    else:
        drawn = _band(at, AT_COLOUR, top, h) + _band(hat, HAT_COLOUR, top, h)
        band_text = "band: ±1 task-clustered std. error"
    grid = "".join(
        f'<line x1="{left}" x2="{left + w}" y1="{_y(v, top, h):.1f}" y2="{_y(v, top, h):.1f}" '
        f'stroke="#e6e9ef"/><text x="{left - 6}" y="{_y(v, top, h) + 4:.1f}" '
        f'text-anchor="end" font-size="10">{v:.2f}</text>'
        for v in (0.0, 0.25, 0.5, 0.75, 1.0)
    )
    step = max(1, n // 10)
    ticks = "".join(
        f'<text x="{_x(k, n, left, w):.1f}" y="{top + h + 14}" text-anchor="middle" '
        f'font-size="10">{k}</text>'
        for k in range(1, n + 1, step)
    )
    legend = (
        f'<text x="{left}" y="{height - 4}" font-size="11" fill="{AT_COLOUR}">■ pass@k</text>'
        f'<text x="{left + 80}" y="{height - 4}" font-size="11" fill="{HAT_COLOUR}">■ pass^k</text>'
        f'<text x="{left + 160}" y="{height - 4}" font-size="11" fill="#5b6474">'
        f"{band_text} · x: k</text>"
    )
    return Markup(
        f'<svg id="curves" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" '
        f'aria-label="pass@k and pass^k against k">{grid}{ticks}{drawn}{legend}</svg>'
    )


def _line(rows: Sequence[tuple[float, float, float]], colour: str) -> str:
    points = [(x, y) for x, y, _ in rows]
    return (f'<path d="{_path(points)}" fill="none" stroke="{colour}" stroke-width="2"/>'
            + _dots(points, colour, 3))  # fmt: skip
