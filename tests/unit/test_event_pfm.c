/*
 * test_event_pfm.c: unit tests of vendor event names through libpfm4. The
 * PMU is forced with LIBPFM_FORCE_PMU (skx, then amd64_fam17h_zen1), so the
 * encodings are checked on any x86 machine, PMU or not. Expected configs
 * are the event select, unit mask, cmask, inv and edge bits Intel's and
 * AMD's public event documentation give for each name (e.g. Skylake-SP
 * L2_RQSTS.ALL_DEMAND_MISS is event 0x24, umask 0x27), written by hand.
 * libpfm4 may not know the forced PMU on an older build: then the cases
 * skip with the reason.
 */
#include "event_cases.h"
#include "event/event.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define P  4 /* PERF_TYPE_RAW: libpfm4 encodes core events as raw */
#define XG XGUEST

static const struct vcase skx[] = {
    {"INST_RETIRED.ANY_P", P, 0xc0, XG},
    {"inst_retired.any_p", P, 0xc0, XG},
    {"INST_RETIRED:ANY_P", P, 0xc0, XG},
    {"INST_RETIRED.ANY", P, 0xc0, XG},
    {"inst_retired.any", P, 0xc0, XG},
    {"INST_RETIRED.ANY:u", P, 0xc0, XG | XK},
    {"INST_RETIRED:ANY_P:c=1:i", P, 0x18000c0, XG},
    {"INST_RETIRED:ANY_P:e:c=1", P, 0x10400c0, XG},
    {"INST_RETIRED:ANY_P:k", P, 0xc0, XG | XU},
    {"INST_RETIRED:ANY_P:precise=2", P, 0xc0, XG, 2},
    {"INST_RETIRED:ANY_P:pp", P, 0xc0, XG, 2},
    {"INST_RETIRED.ANY_P:upp", P, 0xc0, XG | XK | XH, 2},
    {"INST_RETIRED:ANY_P:period=1000", P, 0xc0, XG, 0, 1000, 0, ST},
    {"INST_RETIRED.ANY_P/period=1000/", P, 0xc0, XG, 0, 1000, 0, ST},
    {"skx::L2_RQSTS:ALL_DEMAND_MISS", P, 0x2724, XG},
    {"skx::L2_RQSTS:ALL_DEMAND_MISS:u", P, 0x2724, XG | XK},
    {"L2_RQSTS.ALL_DEMAND_MISS", P, 0x2724, XG},
    {"MEM_LOAD_RETIRED.L3_MISS", P, 0x20d1, XG},
    {"MEM_LOAD_RETIRED:L3_MISS:u", P, 0x20d1, XG | XK},
    {"CPU_CLK_UNHALTED.THREAD", P, 0x3c, XG},
    {"CPU_CLK_UNHALTED.REF_TSC", P, 0x300, XG},
    {"BR_INST_RETIRED.ALL_BRANCHES", P, 0xc4, XG},
    {"BR_MISP_RETIRED.ALL_BRANCHES", P, 0xc5, XG},
    {"UOPS_ISSUED.ANY", P, 0x10e, XG},
    {"DTLB_LOAD_MISSES.WALK_COMPLETED", P, 0xe08, XG},
    {"LONGEST_LAT_CACHE.MISS", P, 0x412e, XG},
    {"CYCLE_ACTIVITY.STALLS_L3_MISS", P, 0x60006a3, XG},
    {"OFFCORE_RESPONSE_0:DMND_DATA_RD:L3_MISS", P, 0x1b7, XG, .config1 = 0x3f84000001},
    {"{INST_RETIRED.ANY_P,cycles}", HW, 0, MEMBER, 0, 0, RF, 0, .idx = 1, .n = 2, .name = "cycles"},
    {"{INST_RETIRED.ANY_P,cycles}:u", P, 0xc0, XG | XK | XH, 0, 0, RFG, 0, .n = 2,
     .name = "INST_RETIRED.ANY_P:u"},
    {"cycles,skx::INST_RETIRED:ANY_P", P, 0xc0, XG, .idx = 1, .n = 2,
     .name = "skx::INST_RETIRED:ANY_P"},
    /* names the other resolvers own still go to them */
    {"cycles:u", HW, 0, XK | XH},
    {"sched:sched_switch:k", TP, 316, XU | XH},
};

static const struct vcase zen1[] = {
    {"RETIRED_INSTRUCTIONS", P, 0xc0, XG},
    {"retired_instructions:u", P, 0xc0, XG | XK | XH}, /* AMD has an h level */
    {"RETIRED_BRANCH_INSTRUCTIONS", P, 0xc2, XG},
    {"RETIRED_BRANCH_INSTRUCTIONS_MISPREDICTED", P, 0xc3, XG},
    {"CYCLES_NOT_IN_HALT", P, 0x76, XG},
    {"RETIRED_UOPS", P, 0xc1, XG},
    {"RETIRED_INSTRUCTIONS:c=2:i", P, 0x28000c0, XG},
    {"amd64_fam17h_zen1::L1_DTLB_MISS:TLB_RELOAD_1G_L2_MISS", P, 0x8045, XG},
    {"L1_DTLB_MISS.TLB_RELOAD_1G_L2_MISS", P, 0x8045, XG},
};

static const struct icase skx_bad[] = {
    {"INST_RETIRED:BOGUS", PS_ERR_UNKNOWN_EVENT, 14, "", NULL},
    {"INST_RETIRED:ANY_Q", PS_ERR_UNKNOWN_EVENT, 14, "ANY_P", NULL},
    {"INST_RETIRED.ANY_Q", PS_ERR_UNKNOWN_EVENT, 14, "ANY_P", NULL},
    {"L2_RQSTS:ALL_DEMAND_MIS", PS_ERR_UNKNOWN_EVENT, 10, "ALL_DEMAND_MISS", NULL},
    {"cycles,INST_RETIRED:ANY_P:q", PS_ERR_UNKNOWN_EVENT, 27, NULL, NULL},
    {"skx::NO_SUCH_EVENT", PS_ERR_UNKNOWN_EVENT, 1, NULL, NULL},
    {"nopmu::INST_RETIRED", PS_ERR_UNKNOWN_EVENT, 1, NULL, NULL},
    {"INST_RETIRD.ANY_P", PS_ERR_UNKNOWN_EVENT, 1, "INST_RETIRED.ANY_P", NULL},
    {"BR_MISP_RETIRD", PS_ERR_UNKNOWN_EVENT, 1, "BR_MISP_RETIRED", NULL},
    /* the fuzzer found the column off after INST_RETIRED.ANY became INSTRUCTION_RETIRED */
    {"INST_RETIRED.ANY:ST", PS_ERR_UNKNOWN_EVENT, 18, NULL, NULL},
};

static bool pmu_known(const char *force)
{
	struct ps_events *evs;

	setenv("LIBPFM_FORCE_PMU", force, 1);
	ps_ev__pfm_reset();
	/* A name only that PMU has tells whether libpfm4 took the forcing. */
	evs = ps_events__parse(!strcmp(force, "skx") ? "skx::INST_RETIRED:ANY_P"
						     : "amd64_fam17h_zen1::RETIRED_UOPS",
			       NULL);
	ps_events__free(evs);
	return evs != NULL;
}

#define RUN(tab, fn)                                                                               \
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)                                  \
	fn(&tab[i])
#define SKIP(tab, why)                                                                             \
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)                                  \
	tap_skip(why, "'%s'", tab[i].spec)

int main(void)
{
	setenv("PERFSCRIPT_TRACEFS", "tests/fixtures/tracefs", 1);
	setenv("PERFSCRIPT_SYSFS", "tests/fixtures/sysfs", 1);
	if (pmu_known("skx")) {
		RUN(skx, check_valid);
		RUN(skx_bad, check_invalid);
	} else {
		SKIP(skx, "this libpfm4 does not know the skx PMU");
		SKIP(skx_bad, "this libpfm4 does not know the skx PMU");
	}
	if (pmu_known("amd64_fam17h_zen1"))
		RUN(zen1, check_valid);
	else
		SKIP(zen1, "this libpfm4 does not know amd64_fam17h_zen1");
	unsetenv("LIBPFM_FORCE_PMU");
	ps_ev__pfm_reset();
	return tap_done();
}
