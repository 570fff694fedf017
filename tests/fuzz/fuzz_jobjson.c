/*
 * fuzz_jobjson.c - the job body of POST /v1/jobs (and of a service's
 * "job"): gf_jv_parse, then gf_jobjson_spec (src/controller/jobjson.c).
 */
#include "controller/jobjson.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gf_jv *v = NULL;
	struct gf_err e = { 0 };
	if (gf_jv_parse((const char *)data, size, &v, &e) != 0)
		return 0;
	struct gf_job_spec spec;
	memset(&spec, 0, sizeof(spec));
	if (gf_jobjson_spec(v, &spec, &e) == 0)
		gf_job_spec_release(&spec);
	gf_jv_free(v);
	return 0;
}
