"""The incident report as one self-contained HTML file: inline CSS and inline SVG, no script, no external
reference of any kind, so it opens offline anywhere, reads without JavaScript and prints.

Plain string templating with :func:`html.escape` on every value. Figures come from ``report_plots``
(matplotlib); without matplotlib the report still carries every figure's text alternative and table.
Each figure carries its marks as ``data-*`` attributes so that tests (and scripts) can read what it shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from html import escape
from typing import Any

from kafkatool.render import report_plots
from kafkatool.render.safe import printable

Doc = dict[str, Any]

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: #111;
       max-width: 1100px; margin: 1.5em auto; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { border-bottom: 2px solid #333; padding-bottom: .15em;
margin-top: 1.8em; } h3 { margin-top: 1.4em; }
.meta { color: #444; font-size: .9em; }
.verdict { border: 3px solid #111; padding: .7em 1em; margin: 1em 0; }
.verdict p.headline { font-size: 1.25em; font-weight: bold; margin: 0 0 .3em; }
.verdict.healthy { background: #e8f3e8; border-style: solid; }
.verdict.damaged { background: #fff4d6; border-style: dashed; }
.verdict.loses-data { background: #fbe3e4; border-style: double; border-width: 6px; }
.verdict .level { text-transform: uppercase; letter-spacing: .06em; font-weight: bold; }
figure { margin: 1em 0; break-inside: avoid; page-break-inside: avoid; }
figure svg { max-width: 100%; height: auto; display: block; }
figcaption { font-size: .9em; color: #222; }
.alt { font-size: .9em; background: #f4f4f4; border-left: 4px solid #777; padding: .4em .7em; margin: .4em 0; }
pre.cmd { background: #f4f4f4; border: 1px solid #ccc; padding: .4em .6em; white-space: pre-wrap;
          word-break: break-all; font-size: .85em; }
table { border-collapse: collapse; font-size: .85em; margin: .6em 0; width: 100%; }
th, td { border: 1px solid #999; padding: .2em .45em; text-align: left; vertical-align: top; }
th { background: #e6e6e6; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.sev-error td:first-child { font-weight: bold; } tr.sev-warning td:first-child { font-style: italic; }
.note, p.empty { color: #444; font-style: italic; }
nav ul { columns: 2; font-size: .9em; }
@media print { body { max-width: none; margin: 0; font-size: 11pt; } nav { display: none; }
  h2 { page-break-after: avoid; } pre.cmd { white-space: pre-wrap; } }
"""


def _e(value: Any) -> str:
    """``value`` as HTML text or attribute: control, C1, bidi and separator characters shown escaped
    (``\\x1b``, ``\\u202e``: visible, never acting on the page's text direction), then HTML-escaped."""
    return escape(printable("–" if value is None else str(value)), quote=True)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-") or "x"


def _attrs(values: dict[str, Any]) -> str:
    """``data-*`` attributes: an absent value is empty, a flag is ``true``/``false``."""
    def text(v: Any) -> str:
        return "" if v is None else str(v).lower() if isinstance(v, bool) else str(v)

    return "".join(f' data-{k.replace("_", "-")}="{_e(text(v))}"' for k, v in values.items())


def _table(columns: list[str], rows: Iterable[list[Any]], classes: Iterable[str] | None = None,
           numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th scope=\"col\">{_e(c)}</th>" for c in columns)
    body = []
    for i, (row, cls) in enumerate(zip(rows, classes or iter(lambda: "", None), strict=False)):
        del i
        cells = "".join(f"<td class=\"num\">{_e(v)}</td>" if j in numeric else f"<td>{_e(v)}</td>"
                        for j, v in enumerate(row))
        body.append(f"<tr class=\"{_e(cls)}\">{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _figure(kind: str, fig_id: str, caption: str, alt: str, draw: Callable[[], str], data: dict[str, Any],
            command: str, empty: str | None = None) -> str:
    """A figure: the SVG (labelled by its text alternative), the caption, the alternative and the command;
    ``empty``: the sentence shown instead of a chart that would have nothing on it."""
    if empty is not None:
        return (f'<figure class="{kind} empty" id="{fig_id}"{_attrs(data)}><p class="empty">{_e(empty)}</p>'
                f'<p>Reproduce with:</p><pre class="cmd">{_e(command)}</pre></figure>')
    if report_plots.available():
        svg = draw()
        svg = svg.replace('<svg role="img" ', f'<svg role="img" aria-labelledby="{fig_id}-alt" ', 1)
        svg = re.sub(r"(<svg[^>]*>)", lambda m: m.group(1) + f"<title>{_e(caption)}</title>", svg, count=1)
    else:
        svg = ('<p class="note">(figure not drawn: matplotlib is not installed — '
               "pip install 'kafkatool[plot]'; the text below says what it shows)</p>")
    return (f'<figure class="{kind}" id="{fig_id}"{_attrs(data)}>{svg}'
            f"<figcaption>{_e(caption)}</figcaption>"
            f'<p class="alt" id="{fig_id}-alt"><strong>Text alternative:</strong> {_e(alt)}</p>'
            f'<p>Reproduce with:</p><pre class="cmd">{_e(command)}</pre></figure>')


def _segment_alt(p: Doc) -> str:
    m = p["marks"]
    disk = p["segments_on_disk"]
    parts = [f"{len(disk)} segment(s) on disk holding offsets "
             f"{disk[0]['base_offset'] if disk else 0} to {max((s['next_offset'] for s in disk), default=0) - 1}."]
    torn = [s for s in disk if s["size_bytes"] > s["valid_bytes"]]
    for s in torn:
        parts.append(f"{s['file']} ends with {s['size_bytes'] - s['valid_bytes']} invalid bytes after byte "
                     f"{s['valid_bytes']} (offset {s['next_offset']}).")
    parts.append(f"Log start offset {_e(m['log_start_offset'])}, recovery point {_e(m['recovery_point'])}, "
                 f"high watermark after load {_e(m['high_watermark'])} (checkpoint said "
                 f"{_e(m['high_watermark_checkpoint'])}), log end after load {_e(m['log_end_offset'])}.")
    if m["failed"]:
        parts.append(f"Kafka fails to load this partition: {p['restart']['error']}.")
    elif m["truncate_at"] is not None:
        lost = m["lost_offsets"]
        parts.append(f"A restart truncates at offset {m['truncate_at']}, dropping {m['bytes_truncated']} bytes"
                     + (f" and offsets {lost[0]} to {lost[1] - 1} ({m['lost_records']} records)." if lost else "."))
    else:
        parts.append("A restart cuts nothing.")
    if m["acknowledged_lost"] is not None:
        a = m["acknowledged_lost"]
        parts.append(f"Offsets {a[0]} to {a[1] - 1} were acknowledged but are missing from this replica.")
    return " ".join(parts)


def _partition(p: Doc, n: int) -> str:
    sid = f"p{n}-{_slug(p['directory'])}"
    m = p["marks"]
    r = p["restart"]
    out = [f'<section class="partition" id="{sid}"><h2>{_e(p["directory"])} on {_e(p["log_dir_label"])}</h2>',
           f'<p class="meta">{_e(p["log_dir"])} — {"clean" if r["clean_shutdown"] else "unclean"} start; '
           f"outcome: {_e(r['outcome'])}</p>",
           "<h3>Segment map</h3>",
           _figure("segment-map", f"{sid}-segments",
                   "Segments on disk and after a simulated restart, to scale in offsets, with the recovery point, "
                   "high watermark, log start offset and the truncation marked.",
                   _segment_alt(p), lambda: report_plots.segment_map(p),
                   {**{k: v for k, v in m.items() if k not in ("lost_offsets", "acknowledged_lost")},
                    "lost_from": m["lost_offsets"][0] if m["lost_offsets"] else None,
                    "lost_to": m["lost_offsets"][1] if m["lost_offsets"] else None,
                    "acknowledged_lost_from": m["acknowledged_lost"][0] if m["acknowledged_lost"] else None,
                    "acknowledged_lost_to": m["acknowledged_lost"][1] if m["acknowledged_lost"] else None},
                   p["commands"]["segments"],
                   None if p["segments_on_disk"] or r["segments"] else
                   "No segment on disk and none after a restart: this partition's log is empty.")]
    steps = [[i, s["action"], s["detail"]] for i, s in enumerate(r["steps"], 1)]
    if steps:
        out.append("<details open><summary>What Kafka does at start-up, step by step</summary>"
                   + _table(["#", "action", "what and why"], steps, numeric={0}) + "</details>")
    epochs = r["leader_epochs"] or p["epochs_on_disk"]
    out += ["<h3>Leader epochs</h3>",
            _figure("epochs", f"{sid}-epochs", "Leader epochs over offsets, as the epoch cache holds them after load.",
                    "; ".join(f"epoch {e['epoch']} led from offset {e['start_offset']}" for e in epochs)
                    or "no leader-epoch entries", lambda: report_plots.epoch_timeline(p),
                    {"epochs": " ".join(f"{e['epoch']}@{e['start_offset']}" for e in epochs)},
                    p["commands"]["epochs"],
                    None if epochs else "No leader-epoch entry, on disk or after load: no batch of this partition "
                    "carries a leader epoch to draw.")]
    rp = p["replay"]
    tx = rp["transactions"]
    alt = (f"{len({s['producer_id'] for s in p['producer_spans']})} producer(s) wrote idempotent or transactional "
           f"data; transactions: {tx['committed']} committed, {tx['aborted']} aborted, {tx['open']} open. "
           f"Last stable offset {_e(rp['last_stable_offset'])}, high watermark {_e(rp['high_watermark'])}.")
    for t in tx["items"]:
        if t["state"] == "open":
            alt += f" Producer {t['producer_id']}'s transaction is open since offset {t['first_offset']}."
    out += ["<h3>Producers and transactions</h3>",
            _figure("producers", f"{sid}-producers",
                    "Producer sessions (thin bars) and transactions (committed, aborted, open) over offsets, with "
                    "the last stable offset.", alt, lambda: report_plots.producer_plot(p),
                    {"last_stable_offset": rp["last_stable_offset"], "first_unstable_offset":
                     rp["first_unstable_offset"], "committed": tx["committed"], "aborted": tx["aborted"],
                     "open": tx["open"], "hanging": len(rp["hanging"])}, p["commands"]["producers"],
                    None if p["producer_spans"] or tx["items"] else
                    "No idempotent or transactional producer wrote to this partition: there is no producer state "
                    "or transaction to draw.")]
    if tx["items"]:
        out.append(_table(["producer", "epoch", "state", "first offset", "last offset", "LSO at end"],
                          [[t["producer_id"], t["producer_epoch"], t["state"], t["first_offset"], t["last_offset"],
                            t["last_stable_offset"]] for t in tx["items"]], numeric={0, 1, 3, 4, 5}))
    out.append("</section>")
    return "".join(out)


def _replicas(rs: Doc, n: int) -> str:
    sid = f"r{n}-{_slug(rs['partition'])}"
    lines = []
    for r in rs["replicas"]:
        lines.append(f"broker {r['broker']}: log end {r['log_end_offset']}, high watermark {r['high_watermark']}, "
                     "epochs " + ", ".join(f"{e}@{s}" for e, s in r["leader_epochs"]) + ".")
    for f in rs["follower_losses"]:
        committed = sum(b[1] - b[0] + 1 for b in f["committed_lost"])
        lines.append(f"Following leader {rs['leader']}, broker {f['follower']} ({f['relation']}) "
                     + (f"diverges at offset {f['divergence_offset']}, " if f["divergence_offset"] is not None else "")
                     + f"truncates to {f['truncation_offset']} and loses {f['lost_record_count']} records"
                     + (f", {committed} of them below its own high watermark." if committed else "."))
    out = [f'<section class="replica-set" id="{sid}"><h2>Replicas of {_e(rs["partition"])}</h2>',
           f'<p class="meta">Leader {rs["leader"]} (chosen by {_e(rs["leader_chosen_by"])}), ISR '
           f'{_e(",".join(map(str, rs["isr"])))}{"" if rs["isr_given"] else " (every broker given: pass --isr)"}; '
           f"a new election would use epoch {rs['next_leader_epoch']}.</p>",
           _figure("replicas", f"{sid}-figure", "The replicas' logs side by side, batches shaded by leader epoch; "
                   "the divergence point (dashed) and the truncation of each follower under the current leader.",
                   " ".join(lines), lambda: report_plots.replica_plot(rs),
                   {"leader": rs["leader"], "partition": rs["partition"]}, rs["command"]),
           "<h3>Every candidate leader and follower</h3>",
           _table(["leader", "follower", "relation", "divergence (epoch)", "divergence (CRC)", "truncates to",
                   "records lost"],
                  [[p["leader"], p["follower"], p["relation"], p["divergence_by_epoch"], p["divergence_by_batch_crc"],
                    p["truncation_offset"], p["lost_record_count"]] for p in rs["pairs"]],
                  classes=[f"pair pair-{p['leader']}-{p['follower']}" for p in rs["pairs"]],
                  numeric={0, 1, 3, 4, 5, 6}),
           "<h3>Elections</h3>",
           _table(["candidate", "clean", "acknowledged batches lost", "acknowledged records lost"],
                  [[e["candidate"], "yes" if e["clean"] else "no (unclean)",
                    " ".join(map(str, e["lost_acknowledged_batches"])) or "none", e["lost_acknowledged_record_count"]]
                   for e in rs["elections"]], numeric={0, 3}),
           "</section>"]
    return "".join(out)


def _findings(doc: Doc) -> str:
    rows = doc["findings"]
    out = ['<section id="findings"><h2>Findings</h2>']
    if rows:
        out.append(_table(["severity", "code", "log dir", "file", "byte", "field", "what it means"],
                          [[f["severity"], f["code"], f["log_dir"], f["file"], f["position"], f["field"], f["reason"]]
                           for f in rows], classes=[f"finding sev-{f['severity']}" for f in rows], numeric={4}))
    else:
        out.append("<p>check found nothing.</p>")
    out += [f'<pre class="cmd">{_e(c)}</pre>' for c in doc["check_commands"]]
    anomalies = [(p, a) for p in doc["partitions"] for a in p["replay"]["anomalies"]]
    if anomalies:
        out.append("<h3>Producer-state anomalies (replay-producers)</h3>")
        out.append(_table(["severity", "code", "partition", "offset", "byte", "producer", "what it means"],
                          [[a["severity"], a["code"], f"{p['directory']} on {p['log_dir_label']}", a["offset"],
                            a["position"], a["producer_id"], a["message"]] for p, a in anomalies],
                          classes=[f"anomaly sev-{a['severity']}" for _, a in anomalies], numeric={3, 4, 5}))
    out.append("</section>")
    return "".join(out)


def _extra(section: Doc) -> str:
    out = [f'<section class="extra" id="{_e(_slug(section["id"]))}"><h2>{_e(section["title"])}</h2>',
           f"<p>{_e(section.get('intro', ''))}</p>"]
    if section["columns"]:
        out.append(_table(section["columns"], section["rows"]))
    for t in section.get("tables", []):  # a section of several tables, each with its caption
        out.append(f'<h3 id="{_e(_slug(t["id"]))}">{_e(t["caption"])}</h3>')
        out.append(_table(t["columns"], t["rows"], classes=[t["id"]] * len(t["rows"]),
                          numeric=set(t.get("numeric", []))) if t["rows"] else '<p class="empty">none</p>')
    out += [f'<pre class="cmd">{_e(c)}</pre>' for c in section.get("commands", [])]
    return "".join(out) + "</section>"


def render_html(doc: Doc) -> str:
    """The whole report; no control, C1, bidi or separator character raw anywhere in it (each value is shown
    escaped as it is placed, and the page is checked once more as a whole)."""
    return printable(_html(doc), keep_newlines=True)


def _html(doc: Doc) -> str:
    """The report's HTML, values escaped where they are placed."""
    v = doc["verdict"]
    parts = [_partition(p, i) for i, p in enumerate(doc["partitions"], 1)]
    replicas = [_replicas(rs, i) for i, rs in enumerate(doc["replica_sets"], 1)]
    extras = [_extra(s) for s in doc.get("sections", [])]
    commands = [c for p in doc["partitions"] for c in p["commands"].values()] + doc["check_commands"] \
        + [rs["command"] for rs in doc["replica_sets"]] + [c for x in doc.get("sections", []) for c in x["commands"]]
    nav = ['<li><a href="#verdict">Verdict</a></li>']
    nav += [f'<li><a href="#p{i}-{_slug(p["directory"])}">{_e(p["directory"])} on {_e(p["log_dir_label"])}</a></li>'
            for i, p in enumerate(doc["partitions"], 1)]
    nav += [f'<li><a href="#r{i}-{_slug(rs["partition"])}">Replicas of {_e(rs["partition"])}</a></li>'
            for i, rs in enumerate(doc["replica_sets"], 1)]
    nav += [f'<li><a href="#{_e(_slug(x["id"]))}">{_e(x["title"])}</a></li>' for x in doc.get("sections", [])]
    nav += ['<li><a href="#findings">Findings</a></li>', '<li><a href="#reproduce">Reproduce</a></li>']
    inputs = "".join(f"<li>{_e(i['label'])}: <code>{_e(i['path'])}</code>"
                     f"{'' if i['clean_shutdown_marker'] else ' (no clean-shutdown marker)'}</li>"
                     for i in doc["inputs"])
    clock = "" if doc.get("now") is None else f" Clock: {doc['now']} ms."
    reasons = "".join(f"<li>{_e(r)}</li>" for r in v["reasons"])
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "img-src data:\">"
        f"<title>{_e(doc['title'])}</title><style>{CSS}</style></head><body>"
        f"<header><h1>{_e(doc['title'])}</h1><p class=\"meta\">Made by kafkatool report from:</p><ul>{inputs}</ul>"
        f"<p class=\"meta\">Every figure below is what kafkatool's subcommands compute on the same input; the "
        f"command under each one reproduces it.{_e(clock)}</p></header>"
        f"<section id=\"verdict\" class=\"verdict {_e(v['level'])}\" data-level=\"{_e(v['level'])}\">"
        f"<p class=\"level\">Verdict: {_e(v['level'].replace('-', ' '))}</p>"
        f"<p class=\"headline\">{_e(v['headline'])}</p><ul>{reasons}</ul></section>"
        f"<nav aria-label=\"contents\"><ul>{''.join(nav)}</ul></nav>"
        + "".join(parts) + "".join(replicas) + _findings(doc) + "".join(extras)
        + '<section id="reproduce"><h2>Reproduce with the CLI</h2>'
        + "".join(f'<pre class="cmd">{_e(c)}</pre>' for c in dict.fromkeys(commands))
        + "</section></body></html>\n"
    )
