/*
 * fuzz_autoscale_manifest.c - an HPA (autoscaling/v2) or KEDA
 * ScaledObject manifest (src/autoscale/manifest.c) through
 * gf_as_parse_manifest.
 */
#include "autoscale/autoscale.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct gf_as_scaler sc;
	struct gf_err e = { 0 };
	memset(&sc, 0, sizeof(sc));
	fz_answer("manifest",
		  gf_as_parse_manifest((const char *)data, size, "fuzz.yaml",
				       &sc, &e),
		  &e);
	return 0;
}
