-- flame.lua: flame graphs as one self-contained SVG file: no external
-- file, font or script, so it opens from disk in any browser, offline.
-- Frames are sized by their value (samples, or time for off-CPU), root at
-- the bottom (an icicle with icicle = true); hovering shows a frame's full
-- name, value and share, a click zooms into it, "Search" highlights the
-- frames whose name matches a regular expression (JavaScript's) and
-- says their share of the whole. Kernel, user, Python, JIT and inlined
-- frames have colours of their own. Every name is escaped: a process named
-- "<script>" shows as text and runs nothing.
--   local flame = require "flame"
--   flame.save("out.svg", flame.svg(p:folded(), { title = "cpu-clock" }))
local M = {}

-- XML text and attribute values: & < > " ' escaped, control characters
-- (other than tab) and invalid UTF-8 replaced, so any name stays text.
function M.escape(s)
  s = tostring(s):gsub("[%z\1-\8\11\12\14-\31\127]", "?")
  if not utf8.len(s) then s = s:gsub("[\128-\255]", "?") end
  return (s:gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;",
                                ["'"] = "&#39;" }))
end

-- "stack count" lines (folded), "stack base new" lines (difffolded.pl's,
-- as pprof.diff_folded writes them), or rows { stack =, value = [, base =] }
-- -> rows
local function rows_of(input)
  if type(input) == "table" then return input end
  local rows = {}
  for line in tostring(input):gmatch("[^\n]+") do
    local stack, a, b = line:match("^(.-)%s+(%d+)%s+(%d+)$")
    if stack then
      rows[#rows + 1] = { stack = stack, value = tonumber(b), base = tonumber(a) }
    else
      stack, a = line:match("^(.-)%s+(%d+)$")
      if stack and tonumber(a) > 0 then rows[#rows + 1] = { stack = stack, value = tonumber(a) } end
    end
  end
  return rows
end

-- The tree of frames: each node { name, value, children (by name), kind }.
local function tree_of(rows)
  local root = { name = "all", value = 0, base = 0, children = {} }
  for _, r in ipairs(rows) do
    local v, b = tonumber(r.value) or 0, tonumber(r.base) or 0
    root.base = root.base + b
    if v > 0 then
      root.value = root.value + v
      local node, depth = root, 0
      for frame in (r.stack .. ";"):gmatch("([^;]*);") do
        depth = depth + 1
        local c = node.children[frame]
        if not c then
          c = { name = frame, value = 0, base = 0, children = {}, depth = depth }
          node.children[frame] = c
        end
        c.value, c.base = c.value + v, c.base + b
        node = c
      end
    end
  end
  return root
end

-- A differential frame's colour: red as its share grew against the base,
-- blue as it shrank, white unchanged; scaled by the largest change.
local function diff_colour(delta, max)
  local i = max > 0 and math.floor(math.abs(delta) / max * 200 + 0.5) or 0
  if delta > 0 then return ("rgb(255,%d,%d)"):format(255 - i, 255 - i) end
  return ("rgb(%d,%d,255)"):format(255 - i, 255 - i)
end

-- A frame's kind, from its name and where it sits: the root frames are the
-- commands; below a syscall or interrupt entry everything is the kernel's.
local function kind_of(name, depth, in_kernel)
  if depth == 1 then return "comm" end
  if in_kernel or name:match("^entry_SYSCALL") or name:match("^asm_") or name:match("^ret_from_fork")
    or name:match("%[k%]$") then
    return "kernel"
  end
  if name:match("^py::") then return "python" end
  if name:match("%(inlined%)") then return "inlined" end
  if name:match("^%[unknown%]") or name:match("JIT") or name:match("^LazyCompile")
    or name:match("^Interpreted") or name:match("^0x") then
    return "jit"
  end
  return "user"
end

-- A stable colour per kind, varied by the name (so neighbours differ).
local PALETTE = {
  comm = { 200, 200, 200, 20 }, kernel = { 230, 140, 40, 40 }, user = { 225, 80, 50, 50 },
  python = { 60, 160, 200, 40 }, jit = { 60, 190, 120, 40 }, inlined = { 240, 180, 110, 30 },
}
local function colour(kind, name)
  local base, h = PALETTE[kind] or PALETTE.user, 0
  for i = 1, #name do h = (h * 31 + name:byte(i)) % 1000 end
  local d = base[4] * h // 1000
  return ("rgb(%d,%d,%d)"):format(math.min(255, base[1] + d // 2), math.min(255, base[2] + d),
    math.min(255, base[3] + d // 3))
end

local SCRIPT = [[
<script type="text/ecmascript"><![CDATA[
var W, frames, status, unzoom, total, unit, matchedText, svgRoot;
function init() {
  svgRoot = document.getElementById("flame"); /* the file's root, or inside a page */
  W = +svgRoot.getAttribute("data-width");
  total = +svgRoot.getAttribute("data-total");
  unit = svgRoot.getAttribute("data-unit");
  frames = document.getElementsByClassName("f");
  status = document.getElementById("status");
  unzoom = document.getElementById("unzoom");
  matchedText = document.getElementById("matched");
  for (var i = 0; i < frames.length; i++) {
    frames[i].addEventListener("mouseover", over);
    frames[i].addEventListener("mouseout", function () { status.textContent = " "; });
    frames[i].addEventListener("click", function (e) { zoom(e.currentTarget); });
  }
  unzoom.addEventListener("click", function () { zoomTo(0, total, 0); });
  document.getElementById("search").addEventListener("click", search);
}
function nameOf(g) { return g.getElementsByTagName("title")[0].getAttribute("data-name"); }
function over(e) {
  var g = e.currentTarget, v = +g.getAttribute("data-w"), b = g.getAttribute("data-b");
  var text = nameOf(g) + " (" + v.toLocaleString() + " " + unit + ", " + (100 * v / total).toFixed(2) + "%";
  if (b !== null) {
    var bt = +svgRoot.getAttribute("data-base-total"), d = 100 * v / total - 100 * b / bt;
    text += "; base " + (+b).toLocaleString() + ", " + (100 * b / bt).toFixed(2) + "%; " +
      (d >= 0 ? "+" : "") + d.toFixed(2) + " points";
  }
  status.textContent = text + ")";
}
function zoom(g) { zoomTo(+g.getAttribute("data-x"), +g.getAttribute("data-w"), +g.getAttribute("data-d")); }
function zoomTo(x0, w0, d0) {
  for (var i = 0; i < frames.length; i++) {
    var g = frames[i], x = +g.getAttribute("data-x"), w = +g.getAttribute("data-w"),
        d = +g.getAttribute("data-d"), r = g.getElementsByTagName("rect")[0],
        t = g.getElementsByTagName("text")[0];
    var inside = x >= x0 && x + w <= x0 + w0, below = d < d0 && x <= x0 && x + w >= x0 + w0;
    if (!inside && !below) { g.style.display = "none"; continue; }
    g.style.display = "";
    var px = inside ? (x - x0) / w0 * (W - 20) + 10 : 10, pw = inside ? w / w0 * (W - 20) : W - 20;
    r.setAttribute("x", px); r.setAttribute("width", Math.max(pw - 0.5, 0));
    t.setAttribute("x", px + 3);
    var name = nameOf(g), fit = Math.floor(pw / 7);
    t.textContent = fit < 3 ? "" : name.length > fit ? name.slice(0, fit - 2) + ".." : name;
  }
  unzoom.style.opacity = w0 < total ? 1 : 0;
}
function search() {
  var term = prompt("Highlight frames whose name matches (a regular expression):", "");
  if (term === null) return;
  var re; try { re = new RegExp(term); } catch (err) { matchedText.textContent = "bad pattern"; return; }
  var spans = [];
  for (var i = 0; i < frames.length; i++) {
    var g = frames[i], r = g.getElementsByTagName("rect")[0], hit = term !== "" && re.test(nameOf(g));
    if (!r.getAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
    r.setAttribute("fill", hit ? "rgb(230,0,230)" : r.getAttribute("data-fill"));
    if (hit) spans.push([+g.getAttribute("data-x"), +g.getAttribute("data-w")]);
  }
  spans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });
  var sum = 0, end = -1;
  for (var j = 0; j < spans.length; j++) {
    var s = spans[j][0], e = s + spans[j][1];
    if (e <= end) continue;
    sum += e - Math.max(s, end); end = e;
  }
  matchedText.textContent = term === "" ? " " : "Matched: " + (100 * sum / total).toFixed(2) + "%";
}
]] .. "]]>" .. [[</script>
]]

-- The frames to draw, depth-first, children by name (as flamegraph.pl
-- merges them), x in value units; those narrower than min_w px are left
-- out with all above them. -> frames, deepest depth
local function layout(root, W, min_w)
  local out, maxd, total = {}, 0, root.value
  local function walk(node, x, in_kernel)
    local names = {}
    for name in pairs(node.children) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local c = node.children[name]
      local kind = kind_of(name, c.depth, in_kernel)
      if total > 0 and c.value / total * (W - 20) >= min_w then
        if c.depth > maxd then maxd = c.depth end
        out[#out + 1] = { node = c, x = x, kind = kind }
        walk(c, x, kind == "kernel")
      end
      x = x + c.value
    end
  end
  walk(root, 0, false)
  return out, maxd
end

-- The change of a frame's share against the base, in points.
local function delta_of(c, root)
  return 100 * c.value / root.value - (root.base > 0 and 100 * c.base / root.base or 0)
end

-- flame.svg(folded_or_rows, opts) -> the SVG text. opts: title, unit (what
-- a value counts: "samples", "us", "ns"), width (px, default 1200),
-- icicle (root on top), min_width (px: narrower frames are left out,
-- default 0.1). Given "stack base new" lines (or rows with base =), a
-- differential graph: frames sized by the new profile, red as their share
-- grew, blue as it shrank, the hover saying both.
function M.svg(input, opts)
  opts = opts or {}
  local W, H = opts.width or 1200, 16
  local unit = opts.unit or "samples"
  local root = tree_of(rows_of(input))
  local total, diff = root.value, root.base > 0
  local out, maxd = layout(root, W, opts.min_width or 0.1)
  local height = (maxd + 1) * H + 90
  local function y_of(depth)
    if opts.icicle then return 40 + (depth - 1) * H end
    return height - 50 - depth * H
  end
  local maxdelta = 0
  for _, f in ipairs(out) do
    if diff then maxdelta = math.max(maxdelta, math.abs(delta_of(f.node, root))) end
  end
  local svg = {
    ('<?xml version="1.0" standalone="no"?>\n<svg id="flame" version="1.1" width="%d" height="%d" '
      .. 'onload="init()" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg" '
      .. 'data-width="%d" data-total="%d" data-unit="%s"%s>\n'):format(W, height, W, height, W, total,
      M.escape(unit), diff and (' data-base-total="%d"'):format(root.base) or ""),
    '<style>text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); } '
      .. '.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; } '
      .. '#unzoom, #search { cursor: pointer; }</style>\n',
    SCRIPT,
    ('<rect x="0" y="0" width="%d" height="%d" fill="rgb(250,250,240)"/>\n'):format(W, height),
    ('<text x="%d" y="24" text-anchor="middle" style="font-size:17px">%s</text>\n'):format(W / 2,
      M.escape(opts.title or "Flame graph")),
    '<text id="unzoom" x="10" y="24" style="opacity:0">Reset zoom</text>\n',
    ('<text id="search" x="%d" y="24" text-anchor="end">Search</text>\n'):format(W - 10),
    ('<text id="matched" x="%d" y="%d" text-anchor="end"> </text>\n'):format(W - 10, height - 17),
    ('<text id="status" x="10" y="%d"> </text>\n'):format(height - 17),
  }
  for _, f in ipairs(out) do
    local c = f.node
    local px, pw = 10 + f.x / total * (W - 20), c.value / total * (W - 20)
    local name = M.escape(c.name)
    local fit = math.floor(pw / 7)
    local label = fit < 3 and "" or #c.name > fit and M.escape(c.name:sub(1, fit - 2)) .. ".." or name
    local fill = diff and diff_colour(delta_of(c, root), maxdelta) or colour(f.kind, c.name)
    svg[#svg + 1] = ('<g class="f" data-x="%d" data-w="%d" data-d="%d"%s><title data-name="%s">%s (%d %s, %.2f%%)'
      .. '</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>'
      .. '<text x="%.1f" y="%d">%s</text></g>\n'):format(f.x, c.value, c.depth,
      diff and (' data-b="%d"'):format(c.base) or "", name, name, c.value, M.escape(unit),
      100 * c.value / total, px, y_of(c.depth), math.max(pw - 0.5, 0), H - 1, fill, px + 3,
      y_of(c.depth) + 11, label)
  end
  svg[#svg + 1] = "</svg>\n"
  return table.concat(svg)
end

-- flame.page(t, opts) -> one HTML page (nothing fetched from anywhere) of
-- a built pprof table t: its flame graph inline, then its top functions
-- by samples. opts: title (the page's), heading (default the title),
-- graph (the flame graph's title), links ({ {href, text}, ... } under the
-- heading), top (rows, default 20). Every name in it is escaped.
function M.page(t, opts)
  local pprof = require "pprof"
  local lines, top, total = {}, {}, 0
  for k, v in pairs(pprof.folded(t)) do lines[#lines + 1] = ("%s %d\n"):format(k, v) end
  table.sort(lines)
  for name, n in pairs(pprof.flat(t)) do top[#top + 1] = { name = name, n = n }; total = total + n end
  table.sort(top, function(a, b) return a.n > b.n or a.n == b.n and a.name < b.name end)
  local rows, links = {}, {}
  for i = 1, math.min(opts.top or 20, #top) do
    rows[i] = ("<tr><td>%d</td><td>%.2f%%</td><td>%s</td></tr>"):format(top[i].n, 100 * top[i].n / total,
                                                                        M.escape(top[i].name))
  end
  for i, l in ipairs(opts.links or {}) do
    links[i] = ('<a href="%s">%s</a>'):format(M.escape(l[1]), M.escape(l[2]))
  end
  local svg = M.svg(table.concat(lines), { title = opts.graph or ("%d samples"):format(total) })
  local title = M.escape(opts.title or "perfscript")
  local heading = opts.heading and M.escape(opts.heading) or title
  return ([[<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%s</title>
<style>body { font-family: sans-serif; margin: 1em; } td { padding: 0 1em 0 0; font-family: monospace; }</style>
</head><body><h1>%s</h1>
<p>%s</p>
%s
<h2>Top functions</h2>
<table><tr><th>samples</th><th>%%</th><th>function</th></tr>
%s
</table></body></html>
]]):format(title, heading, table.concat(links, " · "), (svg:gsub("^<%?xml[^\n]*\n", "")), table.concat(rows, "\n"))
end

-- flame.save(path, svg) -> true, or nil and why (as pprof.save)
function M.save(path, svg) return require("pprof").save(path, svg) end

return M
