"""Colours for every eye (issue 27): which colours of a figure stop telling things apart under
the three common colour-vision deficiencies.

``problems(fig)`` looks at the colours a figure really draws (its artists, not a list of names)
and simulates protanopia, deuteranopia and tritanopia with colorspacious (the model of Machado,
Oliveira and Fernandes 2009, at severity 100: the strongest form of each). Differences are
measured as Delta E' in CAM02-UCS, a space built so that equal distances look equally different.
Two rules:

- **Series.** In one panel, every two colours the data is drawn in (lines, markers, bars,
  scatter points, filled areas, outlines; a translucent one as it looks on the white background)
  that a person with normal colour vision sees as different (Delta E' >= MIN_DELTA_E) must stay
  at least that far apart under each deficiency, unless both are lines with no line style and
  marker in common (then colour is not what tells them apart). Two greys are told apart by
  lightness, which the deficiencies keep: such pairs are not checked. Two lines of one panel
  with different legend labels must differ in colour, line style or marker (a colour cycle that
  wrapped round would give two series one look).
- **Colour maps.** A map over values of one sign must change lightness (J') in one direction
  from end to end under each deficiency, so that "more" still reads as "darker" (or "lighter").
  A map over signed values (vmin < 0 < vmax: a diverging map) must do so on each side of 0, and
  a value and its negative, a quarter of the range or more from 0, must stay MIN_DELTA_E apart;
  a cyclic map (its two ends one colour, as for an angle) the same about its middle, for the
  values a quarter to three quarters of the way from the middle to an end. A map of a few listed
  colours is checked as series, and the colour of masked cells (``cmap.set_bad``), where the
  image has some, must stay MIN_DELTA_E away from every colour of the map.
- **Contrast** (WCAG 2.1, 1.4.11, AA). Every line, every marker (by its face or its edge, an
  "x" or "+" by its edge), every outline of a hollow shape, every scatter point and arrow (by
  face or edge) and every line of a line collection (vlines, error bars) must reach
  MIN_CONTRAST (3:1) against the panel's background (its face over the figure's), a
  translucent one as it looks there: a graphical object a reader needs must. Greys too: a
  reference line or a guide is read as much as a series is. Not checked: filled areas (bars,
  spans, boxes, fill_between), whose edges or labels carry them and a pale span behind the
  data is meant to recede; grid lines, which only help to read values off; and what a mark is
  drawn over when that is not the background (a heatmap's cells under an outline, a fill
  under a line): the check judges against the background alone.

MIN_DELTA_E = 10: the Okabe-Ito palette, made for these deficiencies, keeps every pair of its
colours at 11 or more (the course's, course.figures.SERIES_COLOURS, with its pale colours
replaced by darker ones, at 11.7); matplotlib's default red and green fall to 5 under
deuteranopia, its orange and green to 2 under protanopia.

The notebooks never call this. When COURSE_CHECK_COLOURS=1 is set (the test run sets it for
every notebook kernel nbval starts), ``use_course_style()`` checks each figure whenever it is
drawn in full (a static figure's PNG, a live figure's frames) and writes what it finds to
stderr, once per figure, where strict nbval sees an output the stored notebook does not have.
"""

from __future__ import annotations

import os
import sys
from itertools import combinations

import numpy as np

ENV = "COURSE_CHECK_COLOURS"
MIN_DELTA_E = 10.0
MIN_CONTRAST = 3.0       # WCAG 2.1, 1.4.11: a graphical object against what is around it
DEFICIENCIES = ("protanomaly", "deuteranomaly", "tritanomaly")   # at severity 100: -opia
NAMES = {"protanomaly": "protanopia", "deuteranomaly": "deuteranopia",
         "tritanomaly": "tritanopia", None: "normal vision"}
NEUTRAL_CHROMA = 5.0     # a' and b' this close to 0: a grey
MIRROR_FROM = 0.25       # signed maps: v and -v compared from this fraction of the range outwards
J_TOLERANCE = 0.5        # a lightness step back this small is rounding, not a turn


def _cs():
    try:
        import colorspacious
    except ImportError as exc:  # only a test run asks for the check
        raise ImportError(f"{ENV}=1 asks for the colour check, which needs colorspacious "
                          "(requirements-test.txt)") from exc
    return colorspacious


def seen(rgb, deficiency: str | None) -> np.ndarray:
    """sRGB colours (..., 3) in 0-1 as a person with that deficiency sees them, in CAM02-UCS."""
    cs = _cs()
    rgb = np.asarray(rgb, dtype=float)
    if deficiency is not None:
        space = {"name": "sRGB1+CVD", "cvd_type": deficiency, "severity": 100}
        rgb = np.clip(cs.cspace_convert(rgb, space, "sRGB1"), 0.0, 1.0)
    return cs.cspace_convert(rgb, "sRGB1", "CAM02-UCS")


def _on_white(rgba) -> tuple:
    r, g, b, a = rgba
    return tuple(round(a * c + (1.0 - a), 4) for c in (r, g, b))


def _drawn_as(style):
    """A line style or marker, or None for the ways of saying 'none'."""
    return None if style in (None, "", " ", "None", "none") else style


def _series_colours(ax) -> dict[tuple, dict]:
    """The colours ax draws data in (on white): for each, the first artist that uses it and the
    looks it is drawn with (a line's style and marker; None for anything that is not a line)."""
    from matplotlib.collections import Collection
    from matplotlib.colors import to_rgba

    out: dict[tuple, dict] = {}

    def add(colour, alpha, what, look=None):
        if colour is None or (isinstance(colour, str) and colour.lower() == "none"):
            return
        rgba = to_rgba(colour, alpha)
        if rgba[3] > 0:
            entry = out.setdefault(_on_white(rgba), {"what": what, "looks": set()})
            entry["looks"].add(look)

    for line in ax.get_lines():
        if not line.get_visible():
            continue
        what = f"line {line.get_label()!r}"
        style, marker = _drawn_as(line.get_linestyle()), _drawn_as(line.get_marker())
        look = ("line", style, marker)
        if style is not None:
            add(line.get_color(), line.get_alpha(), what, look)
        if marker is not None:
            add(line.get_markerfacecolor(), line.get_alpha(), what, look)
    for patch in ax.patches:
        if not patch.get_visible():
            continue
        what = f"{type(patch).__name__.lower()} {patch.get_label()!r}"
        if patch.get_fill():
            add(patch.get_facecolor(), None, what)
        else:
            add(patch.get_edgecolor(), None, what)
    for coll in ax.collections:
        if not isinstance(coll, Collection) or not coll.get_visible():
            continue
        if coll.get_array() is not None:   # colours from a colour map: checked as a map
            continue
        for face in np.atleast_2d(coll.get_facecolor()):
            if len(face) == 4:
                add(tuple(face), None, f"{type(coll).__name__} {coll.get_label()!r}")
    return out


def _look_alike_lines(ax, where: str) -> list[str]:
    from matplotlib.colors import to_hex

    seen_looks: dict[tuple, str] = {}
    out = []
    for line in ax.get_lines():
        label = line.get_label()
        if not line.get_visible() or label.startswith("_"):
            continue
        look = (to_hex(line.get_color()), _drawn_as(line.get_linestyle()),
                _drawn_as(line.get_marker()))
        if look in seen_looks and seen_looks[look] != label:
            out.append(f"{where}: lines {seen_looks[look]!r} and {label!r} look the same "
                       f"({look[0]}, line style {look[1]!r}, marker {look[2]!r})")
        seen_looks.setdefault(look, label)
    return out


def _told_apart_by_style(a: dict, b: dict) -> bool:
    """Only lines, and no line style and marker in common: not told apart by colour alone."""
    looks = a["looks"] | b["looks"]
    return None not in looks and not a["looks"] & b["looks"]


def _pair_problems(colours: dict[tuple, dict], where: str) -> list[str]:
    keys = list(colours)
    if len(keys) < 2:
        return []
    views = {d: seen(keys, d) for d in (None, *DEFICIENCIES)}
    neutral = np.hypot(views[None][:, 1], views[None][:, 2]) < NEUTRAL_CHROMA
    out = []
    for i, j in combinations(range(len(keys)), 2):
        if (neutral[i] and neutral[j]) or _told_apart_by_style(colours[keys[i]], colours[keys[j]]):
            continue
        normal = np.linalg.norm(views[None][i] - views[None][j])
        if normal < MIN_DELTA_E:
            continue
        for d in DEFICIENCIES:
            gap = np.linalg.norm(views[d][i] - views[d][j])
            if gap < MIN_DELTA_E:
                out.append(f"{where}: {colours[keys[i]]['what']} {_hex(keys[i])} and "
                           f"{colours[keys[j]]['what']} "
                           f"{_hex(keys[j])}: Delta E' {normal:.0f} to normal vision, "
                           f"{gap:.1f} under {NAMES[d]} (at least {MIN_DELTA_E:.0f})")
    return out


def _hex(rgb) -> str:
    return "#" + "".join(f"{round(c * 255):02x}" for c in rgb)


def _monotonic(j: np.ndarray) -> bool:
    steps = np.diff(j)
    return bool(np.all(steps >= -J_TOLERANCE) or np.all(steps <= J_TOLERANCE))


def _map_problems(mappable, where: str) -> list[str]:
    from matplotlib.colors import ListedColormap

    cmap, norm = mappable.get_cmap(), mappable.norm
    name = f"{where}: colour map {cmap.name!r}"
    if isinstance(cmap, ListedColormap) and cmap.N <= 16:
        colours = {tuple(round(c, 4) for c in cmap(k)[:3]):
                   {"what": f"colour {k} of {cmap.name!r}", "looks": {None}} for k in range(cmap.N)}
        return _pair_problems(colours, where)
    vmin, vmax = norm.vmin, norm.vmax
    if vmin is None or vmax is None or not vmax > vmin:
        return []
    s = np.linspace(0.0, 1.0, 65)
    rgb = cmap(s)[:, :3]
    out = []
    # a signed map is read from 0 outwards; so is a cyclic one (its ends one colour: an angle's
    # colour map, say) from its middle
    first, last = seen(rgb[[0, -1]], None)
    ends = np.linalg.norm(first - last)
    zero = float(norm(0.0)) if vmin < 0 < vmax else 0.5 if ends < 2.0 else None
    for d in (None, *DEFICIENCIES):
        ucs = seen(rgb, d)
        if zero is None:
            if not _monotonic(ucs[:, 0]):
                out.append(f"{name}: its lightness turns under {NAMES[d]}")
            continue
        below, above = ucs[s <= zero, 0], ucs[s >= zero, 0]
        if not (_monotonic(below) and _monotonic(above)):
            out.append(f"{name}: its lightness turns on one side of 0 under {NAMES[d]}")
        far = np.linspace(MIRROR_FROM, 1.0 if vmin < 0 < vmax else 1.0 - MIRROR_FROM, 13)
        lo, hi = zero - far * zero, zero + far * (1.0 - zero)
        gaps = np.linalg.norm(seen(cmap(lo)[:, :3], d) - seen(cmap(hi)[:, :3], d), axis=1)
        if gaps.min() < MIN_DELTA_E:
            out.append(f"{name}: a value and its negative are Delta E' {gaps.min():.1f} apart "
                       f"under {NAMES[d]} (at least {MIN_DELTA_E:.0f})")
    data = mappable.get_array()
    if data is not None and np.ma.count_masked(np.ma.masked_invalid(data)):
        bad = np.asarray(cmap.get_bad()[:3])[None, :]
        for d in (None, *DEFICIENCIES):
            gap = np.linalg.norm(seen(rgb, d) - seen(bad, d), axis=1).min()
            if gap < MIN_DELTA_E:
                out.append(f"{name}: its colour for masked cells {_hex(bad[0])} comes within "
                           f"Delta E' {gap:.1f} of the map under {NAMES[d]}")
    return out


def luminance(rgb) -> float:
    """WCAG 2.1's relative luminance of an sRGB colour (components 0-1)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb[:3]]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a, b) -> float:
    """WCAG 2.1's contrast ratio of two sRGB colours, 1 to 21."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def _on(rgba, background) -> tuple:
    r, g, b, a = rgba
    return tuple(a * c + (1.0 - a) * bg for c, bg in zip((r, g, b), background, strict=True))


def _background(ax) -> tuple:
    """The colour a panel's marks are drawn on: its face over the figure's over white, or the
    figure's where the panel draws no face (axis off, frame off)."""
    from matplotlib.colors import to_rgba

    colour = _on(to_rgba(ax.figure.get_facecolor()), (1.0, 1.0, 1.0))
    if ax.axison and ax.get_frame_on() and ax.patch.get_visible():
        colour = _on(to_rgba(ax.patch.get_facecolor()), colour)
    return colour


def _contrast_problems(ax, where: str) -> list[str]:
    """Marks below MIN_CONTRAST against the panel's background: each mark is a set of ways it is
    seen (a marker's face and its edge), and it passes when one of them reaches the contrast."""
    from matplotlib.collections import LineCollection, PathCollection
    from matplotlib.colors import to_rgba
    from matplotlib.markers import MarkerStyle
    from matplotlib.quiver import Quiver

    background = _background(ax)
    found: dict[tuple, str] = {}

    def seen_as(colour, alpha=None):
        if colour is None or (isinstance(colour, str) and colour.lower() == "none"):
            return None
        rgba = to_rgba(colour, alpha)
        return tuple(round(c, 4) for c in _on(rgba, background)) if rgba[3] > 0 else None

    def mark(ways, what):
        ways = [w for w in ways if w is not None]
        if ways and max(contrast(w, background) for w in ways) < MIN_CONTRAST:
            found.setdefault(max(ways, key=lambda w: contrast(w, background)), what)

    for line in ax.get_lines():
        if not line.get_visible():
            continue
        what = f"line {line.get_label()!r}"
        alpha = line.get_alpha()
        if _drawn_as(line.get_linestyle()) is not None and line.get_linewidth() > 0:
            mark([seen_as(line.get_color(), alpha)], what)
        marker = _drawn_as(line.get_marker())
        if marker is not None:
            edge = seen_as(line.get_markeredgecolor(), alpha) if line.get_markeredgewidth() > 0 \
                else None
            if MarkerStyle(marker).is_filled():   # seen by its face, or by its edge
                mark([seen_as(line.get_markerfacecolor(), alpha), edge], what)
            else:                                # "x", "+": nothing but edge
                mark([edge], what)
    for patch in ax.patches:
        hollow = not patch.get_fill() or to_rgba(patch.get_facecolor())[3] == 0
        if patch.get_visible() and hollow and patch.get_linewidth() > 0:
            mark([seen_as(patch.get_edgecolor())], f"outline {patch.get_label()!r}")
    for coll in ax.collections:
        if not coll.get_visible() or coll.get_array() is not None:   # a colour map's: as a map
            continue
        what = f"{type(coll).__name__} {coll.get_label()!r}"
        if isinstance(coll, LineCollection):       # vlines, error bars: every colour
            if max(coll.get_linewidths(), default=0) > 0:
                for edge in np.atleast_2d(coll.get_edgecolor()):
                    if len(edge) == 4:
                        mark([seen_as(tuple(edge))], what)
        elif isinstance(coll, (PathCollection, Quiver)):   # scatter points, arrows
            faces, edges = np.atleast_2d(coll.get_facecolor()), np.atleast_2d(coll.get_edgecolor())
            widths = np.atleast_1d(coll.get_linewidths())
            for k in range(max(len(faces), len(edges))):   # none of one kind: "none" given
                face = tuple(faces[k % len(faces)]) if len(faces) and faces.shape[1:] == (4,) \
                    else None
                edge = tuple(edges[k % len(edges)]) if len(edges) and edges.shape[1:] == (4,) \
                    and len(widths) and widths[k % len(widths)] > 0 else None
                mark([seen_as(face), seen_as(edge)], what)
    return [f"{where}: {what} {_hex(rgb)} has contrast {contrast(rgb, background):.2f}:1 "
            f"against the panel's background (at least {MIN_CONTRAST:.0f}:1)"
            for rgb, what in found.items()]


def problems(fig) -> list[str]:
    """Where fig's colours stop telling things apart under a colour-vision deficiency."""
    out = []
    for k, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        where = f"panel {k + 1} ({ax.get_title() or 'untitled'})"
        out += _pair_problems(_series_colours(ax), where)
        out += _look_alike_lines(ax, where)
        out += _contrast_problems(ax, where)
        for m in [*ax.images, *(c for c in ax.collections if c.get_array() is not None)]:
            out += _map_problems(m, where)
    return out


def check_when_asked() -> None:
    """With COURSE_CHECK_COLOURS=1: every full draw of a figure (a static figure's PNG, a live
    figure's frames) is checked, and each problem that problems() finds goes to stderr once per
    figure (see the module's docstring)."""
    if os.environ.get(ENV) != "1":
        return
    _cs()
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    original = FigureCanvasAgg.draw
    if getattr(original, "checks_colours", False):
        return

    def draw_checked(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        fig = self.figure
        told = fig.__dict__.setdefault("_colour_problems_told", set())
        for line in problems(fig):
            if line not in told:
                told.add(line)
                print(f"colour check: {line}", file=sys.stderr)
        return result

    draw_checked.checks_colours = True
    FigureCanvasAgg.draw = draw_checked
