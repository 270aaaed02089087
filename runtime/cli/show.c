/*
 * show.c: how the REPL shows a result. Scalars as print() shows them,
 * strings quoted; a value with __tostring (a counter, a group, a sample)
 * by its __tostring; a plain table one level deep: its list part in order,
 * then its other keys sorted (numbers, then strings, then the rest by
 * name), nested tables as {...}, at most SHOW_MAX entries ("... N more"),
 * on one line when it fits in 80 columns, else wrapped at 80; what a
 * chunk ending in ":read()" returns (a counter's value, enabled, running
 * and raw, or a group's values), labelled. One
 * level only, so a table that holds itself shows as {...}, never loops.
 * Written in Lua: it is all table walking and string formatting.
 */
#include <lauxlib.h>
#include <string.h>

#include "cli/repl.h"

static const char show_lua[] =
    "local MAX = 50\n"
    "local function rank(k)\n"
    "  local t = type(k)\n"
    "  return t == 'number' and 1 or t == 'string' and 2 or 3\n"
    "end\n"
    "local function before(a, b)\n"
    "  local ra, rb = rank(a), rank(b)\n"
    "  if ra ~= rb then return ra < rb end\n"
    "  if ra < 3 then return a < b end\n"
    "  return tostring(a) < tostring(b)\n"
    "end\n"
    "local function has_tostring(v)\n"
    "  local mt = getmetatable(v)\n"
    "  return type(mt) == 'table' and rawget(mt, '__tostring') ~= nil\n"
    "end\n"
    "local function scalar(v)\n"
    "  if type(v) == 'string' then return (string.format('%q', v):gsub('\\\\\\n', '\\\\n')) end\n"
    "  if type(v) == 'table' and not has_tostring(v) then\n"
    "    return next(v) == nil and '{}' or '{...}'\n"
    "  end\n"
    "  return tostring(v)\n"
    "end\n"
    "local function key(k)\n"
    "  if type(k) == 'string' and k:match('^[%a_][%w_]*$') then return k end\n"
    "  return '[' .. scalar(k) .. ']'\n"
    "end\n"
    "local function table_text(t)\n"
    "  local parts, n = {}, #t\n"
    "  for i = 1, math.min(n, MAX) do parts[#parts + 1] = scalar(rawget(t, i)) end\n"
    "  local keys = {}\n"
    "  for k in next, t do\n"
    "    if not (math.type(k) == 'integer' and k >= 1 and k <= n) then keys[#keys + 1] = k end\n"
    "  end\n"
    "  table.sort(keys, before)\n"
    "  for i = 1, #keys do\n"
    "    if #parts >= MAX then break end\n"
    "    parts[#parts + 1] = key(keys[i]) .. ' = ' .. scalar(rawget(t, keys[i]))\n"
    "  end\n"
    "  local more = n + #keys - #parts\n"
    "  if more > 0 then parts[#parts + 1] = '... ' .. more .. ' more' end\n"
    "  if #parts == 0 then return '{}' end\n"
    "  local line = '{ ' .. table.concat(parts, ', ') .. ' }'\n"
    "  if #line <= 80 then return line end\n"
    "  local lines, cur = {}, ''\n"
    "  for i, p in ipairs(parts) do\n"
    "    if i < #parts then p = p .. ',' end\n"
    "    if cur ~= '' and #cur + #p > 77 then lines[#lines + 1] = cur; cur = '' end\n"
    "    cur = cur == '' and '  ' .. p or cur .. ' ' .. p\n"
    "  end\n"
    "  lines[#lines + 1] = cur\n"
    "  return '{\\n' .. table.concat(lines, '\\n') .. '\\n}'\n"
    "end\n"
    "local function read_text(chunk, n, v, en, run, raw)\n"
    "  if not chunk:match(':read%s*%(%s*%)[%s;]*$') or type(en) ~= 'number' then return end\n"
    "  if n == 4 and type(v) == 'number' then\n"
    "    return ('value %s  enabled %s ns  running %s ns  raw %s'):format(v, en, run, raw)\n"
    "  elseif n == 3 and type(v) == 'table' and not has_tostring(v) then\n"
    "    return ('values %s  enabled %s ns  running %s ns'):format(table_text(v), en, run)\n"
    "  end\n"
    "end\n"
    "return function(chunk, ...)\n"
    "  local read = read_text(chunk, select('#', ...), ...)\n"
    "  if read then print(read); return end\n"
    "  local out = {}\n"
    "  for i = 1, select('#', ...) do\n"
    "    local v = select(i, ...)\n"
    "    if type(v) == 'table' and not has_tostring(v) then out[i] = table_text(v)\n"
    "    elseif type(v) == 'string' then out[i] = v\n"
    "    else out[i] = tostring(v) end\n"
    "  end\n"
    "  print(table.concat(out, '\\t'))\n"
    "end\n";

int ps_cli_show__load(lua_State *L)
{
	return luaL_loadbuffer(L, show_lua, sizeof(show_lua) - 1, "=show");
}
