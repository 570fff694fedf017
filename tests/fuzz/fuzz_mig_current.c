/*
 * fuzz_mig_current.c - the "current MIG layout" file of `mig plan
 * --current` (src/mig/current.c) through gf_mig_current_read, for eight
 * GPUs of two models.
 */
#include <gpufleet/mig.h>
#include <gpufleet/mig_plan.h>

#include "fuzz.h"
#include "mig/current.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".txt");
	struct gf_mig_gpu g[8];
	bool listed[8];
	struct gf_err e = { 0 };
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 8; i++)
		g[i].model = gf_mig_model_by_id(i < 4 ? "h100-80gb" : "a30");
	if (g[0].model == NULL || g[4].model == NULL)
		abort();
	fz_answer("mig-current", gf_mig_current_read(path, g, 8, listed, &e),
		  &e);
	return 0;
}
