/*
 * fuzz_chargeback.c - chargeback inputs (src/chargeback/read.c, sacct.c):
 * one file through the records, assets, telemetry and sacct readers
 * (strict and lenient), and its first line through gf_cb_parse_time and
 * gf_cb_parse_window (the `window=` query of GET /v1/chargeback).
 */
#include <gpufleet/charge.h>

#include "chargeback/chargeback.h"
#include "fuzz.h"

static void records(const char *path, bool lenient)
{
	struct gf_charge_input in;
	struct gf_cb_skips sk = { 0 };
	struct gf_err e = { 0 };
	gf_charge_input_init(&in);
	fz_answer("records", gf_cb_read_records(&in, path, lenient, &sk, &e),
		  &e);
	gf_charge_input_release(&in);
	gf_cb_skips_release(&sk);

	gf_charge_input_init(&in);
	fz_answer("telemetry",
		  gf_cb_read_telemetry(&in, path, lenient, &sk, &e), &e);
	gf_charge_input_release(&in);
	gf_cb_skips_release(&sk);

	gf_charge_input_init(&in);
	fz_answer("sacct",
		  gf_cb_read_sacct(&in, path, INT64_C(1714521600000), lenient,
				   &sk, &e),
		  &e);
	gf_charge_input_release(&in);
	gf_cb_skips_release(&sk);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".csv");
	records(path, false);
	records(path, true);

	struct gf_charge_input in;
	struct gf_err e = { 0 };
	gf_charge_input_init(&in);
	fz_answer("assets", gf_cb_read_assets(&in, path, NULL, &e), &e);
	gf_charge_input_release(&in);

	/* the first line, exactly as long as it is (ASan sees overreads) */
	size_t n = 0;
	while (n < size && n < 256 && data[n] != '\n')
		n++;
	char *s = fz_str(data, n);
	int64_t ms, a, b;
	if (gf_cb_parse_time(s, &ms) != 0) /* only that it answers */
		ms = 0;
	fz_answer("window",
		  gf_cb_parse_window(s, INT64_C(1714521600000), &a, &b, &e),
		  &e);
	free(s);
	return 0;
}
