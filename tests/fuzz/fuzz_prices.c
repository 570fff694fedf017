/*
 * fuzz_prices.c - a chargeback prices file (src/chargeback/prices.c)
 * through gf_cb_read_prices and gf_cb_gpu_price.
 */
#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".yaml");
	struct gf_cb_prices p;
	struct gf_err e = { 0 };
	gf_cb_prices_init(&p);
	int rc = gf_cb_read_prices(path, &p, &e);
	fz_answer("prices", rc, &e);
	if (rc == 0) {
		(void)gf_cb_gpu_price(&p, "h100-sxm");
		(void)gf_cb_gpu_price(&p, "");
	}
	gf_cb_prices_release(&p);
	return 0;
}
