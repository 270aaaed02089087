-- bpf_profile.lua: a CPU profile counted in the kernel. A cpu-clock
-- sampling counter's overflows are aggregated by user and kernel stack in
-- BPF maps (no sample crosses to user space); at the end the top stacks are
-- printed, and the folded form ("root;...;leaf count", for flamegraph.pl)
-- goes to the file given with --folded, its flame graph to --svg's.
--   perfscript examples/bpf_profile.lua -c ./app [--folded out.folded] [--svg out.svg] [--top N]
local opts = require("args").parse(arg, {
  name = "bpf_profile.lua",
  report = true,
  usage = "perfscript examples/bpf_profile.lua -c 'CMD args' | -p PID | -a [options]",
  target = true,
  summary = "A CPU profile counted in the kernel: the top user+kernel stacks at 1 kHz.",
  { "--folded", "FILE", "write the folded stacks to FILE (flamegraph.pl)" },
  { "--svg", "FILE", "write their flame graph (SVG) to FILE" },
  { "--top", "N", "stacks to print (default 10)", number = true, integer = true, min = 1, default = 10 },
})
local need = require("args").need
local folded_path, top = opts.folded, opts.top

prof = perfmon_allocate_counter("cpu-clock/period=1000000,bpf/")  -- 1 kHz, in-kernel
local stacks = need(perfmon.aggregate(prof, { by = { "ustack", "kstack" } }))

probe("end", function()
  local rows, total = {}, 0
  for stack, n in pairs(stacks:read()) do
    rows[#rows + 1] = { stack = stack, n = n }
    total = total + n
  end
  table.sort(rows, function(a, b) return a.n > b.n end)
  printf("%d samples in %d distinct stacks\n", total, #rows)
  for i = 1, math.min(top, #rows) do
    local leaf = rows[i].stack:match("([^;]*)$")
    printf("%6d %5.1f%%  %s\n", rows[i].n, 100 * rows[i].n / total, leaf)
  end
  local lines = {}
  for i, r in ipairs(rows) do lines[i] = ("%s %d\n"):format(r.stack, r.n) end
  for _, out in ipairs { { folded_path, "folded stacks" }, { opts.svg, "flame graph" } } do
    if out[1] then
      local text = table.concat(lines)
      if out[2] == "flame graph" then
        text = require("flame").svg(text, { title = ("%d samples of cpu-clock, counted in the kernel"):format(total) })
      end
      local ok, err = require("pprof").save(out[1], text)
      if not ok then
        io.stderr:write("bpf_profile.lua: cannot write ", err, "\n")
        return exit(1)
      end
      printf("%s written to %s\n", out[2], out[1])
    end
  end
  if stacks:dropped() > 0 then printf("(%d samples found the map full)\n", stacks:dropped()) end
end)
