-- busted.lua: runs the busted specs under perfscript's own Lua 5.4 runtime,
-- so specs see the real perfmon module and a live counter session.
--   perfscript tests/busted.lua -- [busted options] tests/spec
require("busted.runner")({ standalone = false })
