-- bpf_filter.lua: a system-wide counter filtered in the kernel. The
-- cpu-clock counter samples every CPU (-a), but its BPF program forwards
-- only the overflows of the target command's process, so the handler never
-- sees (and user space never pays for) anyone else's samples.
--   perfscript -a examples/bpf_filter.lua -c ./app
require("args").parse(arg, {
  name = "bpf_filter.lua",
  report = true,
  usage = "perfscript -a examples/bpf_filter.lua -c 'CMD args'",
  summary = "Samples every CPU; a BPF program forwards only the command's own overflows.",
})
clock = perfmon_allocate_counter("cpu-clock/period=1000000/")  -- 1 kHz per CPU
local n, other, funcs = 0, 0, {}

probe("perfmon.sample(clock)", function(s)
  n = n + 1
  if s.pid ~= target() then other = other + 1 end  -- stays 0: filtered in the kernel
  local f = s.sym:match("^[^+]*")
  funcs[f] = (funcs[f] or 0) + 1
end, { backend = "bpf", pid = target() })

probe("end", function()
  printf("%d samples of pid %d, %d of other processes\n", n, target(), other)
  local rows = {}
  for f, k in pairs(funcs) do rows[#rows + 1] = { f = f, k = k } end
  table.sort(rows, function(a, b) return a.k > b.k end)
  for i = 1, math.min(5, #rows) do printf("%6d  %s\n", rows[i].k, rows[i].f) end
end)
