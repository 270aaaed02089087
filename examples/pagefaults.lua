-- pagefaults.lua: which functions of a command take page faults. Every
-- fault is a sample (period=1); the handler counts them by function.
--   perfscript examples/pagefaults.lua -c './app args'
require("args").parse(arg, {
  name = "pagefaults.lua",
  report = true,
  usage = "perfscript examples/pagefaults.lua -c 'CMD args'",
  target = true,
  summary = "Which functions of a command take page faults.",
})
faults = perfmon_allocate_counter("page-faults/period=1/")
local by_func, total = {}, 0

probe("perfmon.sample(faults)", function(s)
  local f = s.sym:gsub("%+0x%x+$", "")
  by_func[f] = (by_func[f] or 0) + 1
  total = total + 1
end)

probe("end", function()
  local rows = {}
  for f, n in pairs(by_func) do rows[#rows + 1] = { f, n } end
  table.sort(rows, function(a, b) return a[2] > b[2] end)
  printf("%d page faults\n\n%8s  %s\n", total, "faults", "function")
  for r = 1, math.min(10, #rows) do printf("%8d  %s\n", rows[r][2], rows[r][1]) end
end)
