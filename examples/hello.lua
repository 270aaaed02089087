-- hello.lua: the smallest probe script: a counter on perfscript itself.
--   perfscript examples/hello.lua
require("args").parse(arg, {
  name = "hello.lua",
  report = true,
  usage = "perfscript examples/hello.lua",
  summary = "The smallest probe script: a counter on perfscript itself.",
})
local clock = assert(perfmon.counter("task-clock"))

probe("begin", function()
  print("hello from perfscript " .. perfmon.version)
  clock:start()
end)

probe("end", function()
  local ns = clock:read()
  printf("this script ran for %.3f ms of CPU time\n", ns / 1e6)
end)
