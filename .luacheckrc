-- luacheck configuration: the globals perfscript gives every script.
stds.perfscript = {
  read_globals = {
    "perfmon", "probe", "printf", "exit", "pid", "tid", "cpu", "execname",
    "gettimeofday_ns", "target", "target_command", "target_cpus", "target_times",
    "perfmon_allocate_counter", "perfmon_free_counter", "perfmon_create_context",
    "perfmon_get_counter", "perfmon_start_counter", "perfmon_stop_counter",
    "perfmon_handle_to_string",
  },
}
std = "lua54+perfscript"
files["tests/spec"] = { std = "+busted" }
-- Sample probes name the global that holds their counter.
files["examples"] = { allow_defined_top = true, ignore = { "131" } } -- 131: unused global
