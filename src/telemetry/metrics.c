/*
 * metrics.c - metric table and counters CSV.
 */
#include "telemetry/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/str.h"

/* Help texts verbatim from dcgm-exporter's default-counters.csv. */
static const struct gf_metric_def defs[GF_M_COUNT] = {
	[GF_M_SM_CLOCK] = { "DCGM_FI_DEV_SM_CLOCK", "gauge",
			    "SM clock frequency (in MHz).", false, false },
	[GF_M_MEM_CLOCK] = { "DCGM_FI_DEV_MEM_CLOCK", "gauge",
			     "Memory clock frequency (in MHz).", false, false },
	[GF_M_GPU_TEMP] = { "DCGM_FI_DEV_GPU_TEMP", "gauge",
			    "GPU temperature (in C).", false, false },
	[GF_M_POWER] = { "DCGM_FI_DEV_POWER_USAGE", "gauge",
			 "Power draw (in W).", false, false },
	[GF_M_ENERGY] = { "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter",
			  "Total energy consumption since boot (in mJ).", false,
			  false },
	[GF_M_PCIE_REPLAY] = { "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter",
			       "Total number of PCIe retries.", false, false },
	[GF_M_GPU_UTIL] = { "DCGM_FI_DEV_GPU_UTIL", "gauge",
			    "GPU utilization (in %).", false, false },
	[GF_M_MEM_COPY_UTIL] = { "DCGM_FI_DEV_MEM_COPY_UTIL", "gauge",
				 "Memory utilization (in %).", false, false },
	[GF_M_ENC_UTIL] = { "DCGM_FI_DEV_ENC_UTIL", "gauge",
			    "Encoder utilization (in %).", false, false },
	[GF_M_DEC_UTIL] = { "DCGM_FI_DEV_DEC_UTIL", "gauge",
			    "Decoder utilization (in %).", false, false },
	[GF_M_XID] = { "DCGM_FI_DEV_XID_ERRORS", "gauge",
		       "Value of the last XID error encountered.", false,
		       false },
	[GF_M_FB_FREE] = { "DCGM_FI_DEV_FB_FREE", "gauge",
			   "Framebuffer memory free (in MiB).", true, false },
	[GF_M_FB_USED] = { "DCGM_FI_DEV_FB_USED", "gauge",
			   "Framebuffer memory used (in MiB).", true, false },
	[GF_M_FB_RESERVED] = { "DCGM_FI_DEV_FB_RESERVED", "gauge",
			       "Framebuffer memory reserved (in MiB).", false,
			       false },
	[GF_M_UNC_REMAPPED] = { "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
				"counter",
				"Number of remapped rows for uncorrectable "
				"errors",
				false, false },
	[GF_M_COR_REMAPPED] = { "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
				"counter",
				"Number of remapped rows for correctable errors",
				false, false },
	[GF_M_REMAP_FAILURE] = { "DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge",
				 "Whether remapping of rows has failed", false,
				 false },
	[GF_M_PROF_GR] = { "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
			   "Ratio of time the graphics engine is active.", true,
			   false },
	[GF_M_PROF_TENSOR] = { "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge",
			       "Ratio of cycles the tensor (HMMA) pipe is "
			       "active.",
			       true, false },
	[GF_M_PROF_DRAM] = { "DCGM_FI_PROF_DRAM_ACTIVE", "gauge",
			     "Ratio of cycles the device memory interface is "
			     "active sending or receiving data.",
			     true, false },
	[GF_M_PCIE_TX] = { "DCGM_FI_PROF_PCIE_TX_BYTES", "gauge",
			   "The rate of data transmitted over the PCIe bus - "
			   "including both protocol headers and data payloads "
			   "- in bytes per second.",
			   false, false },
	[GF_M_PCIE_RX] = { "DCGM_FI_PROF_PCIE_RX_BYTES", "gauge",
			   "The rate of data received over the PCIe bus - "
			   "including both protocol headers and data payloads "
			   "- in bytes per second.",
			   false, false },
	[GF_M_PROF_SM_ACTIVE] = { "DCGM_FI_PROF_SM_ACTIVE", "gauge",
				  "The ratio of cycles an SM has at least 1 "
				  "warp assigned.",
				  true, true },
	[GF_M_ECC_SBE_VOL] = { "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter",
			       "Total number of single-bit volatile ECC "
			       "errors.",
			       false, true },
	[GF_M_ECC_DBE_VOL] = { "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter",
			       "Total number of double-bit volatile ECC "
			       "errors.",
			       false, true },
	[GF_M_ECC_SBE_AGG] = { "DCGM_FI_DEV_ECC_SBE_AGG_TOTAL", "counter",
			       "Total number of single-bit persistent ECC "
			       "errors.",
			       false, true },
	[GF_M_ECC_DBE_AGG] = { "DCGM_FI_DEV_ECC_DBE_AGG_TOTAL", "counter",
			       "Total number of double-bit persistent ECC "
			       "errors.",
			       false, true },
};
_Static_assert(GF_M_COUNT <= 32, "gf_sample.valid is a 32-bit mask");

const struct gf_metric_def *gf_metric_def(enum gf_metric m)
{
	return (unsigned)m < GF_M_COUNT ? &defs[m] : NULL;
}

enum gf_metric gf_metric_by_name(const char *name)
{
	for (int i = 0; i < GF_M_COUNT; i++)
		if (strcmp(defs[i].name, name) == 0)
			return (enum gf_metric)i;
	return GF_M_COUNT;
}

void gf_counters_default(struct gf_counters *c)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < GF_M_COUNT; i++)
		if (!defs[i].opt_in)
			c->order[c->n++] = (enum gf_metric)i;
	c->driver_label = true;
}

int gf_counters_read(const char *path, struct gf_counters *c, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	FILE *f = gf_file_open(path, "r", 1u << 20, e);
	if (!f)
		return e ? e->code : GF_EINVAL;
	char line[1024];
	int lineno = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			rc = gf_err_set(e, GF_ETOOBIG,
					"%s:%d: line longer than %zu bytes",
					path, lineno, sizeof(line) - 2);
			break;
		}
		char *s = gf_str_trim(line);
		if (*s == '#' || *s == '\0')
			continue;
		char *f1 = strchr(s, ','),
		     *f2 = f1 ? strchr(f1 + 1, ',') : NULL;
		if (!f1 || !f2) {
			rc = gf_err_set(e, GF_EPARSE,
					"%s:%d: expected 'NAME, TYPE, HELP'",
					path, lineno);
			break;
		}
		*f1 = *f2 = '\0';
		char *name = gf_str_trim(s), *type = gf_str_trim(f1 + 1);
		if (strcmp(type, "gauge") && strcmp(type, "counter") &&
		    strcmp(type, "label")) {
			rc = gf_err_set(
				e, GF_EPARSE,
				"%s:%d: field type '%s': expected gauge, "
				"counter or label",
				path, lineno, type);
			break;
		}
		if (!strcmp(name, "DCGM_FI_DRIVER_VERSION")) {
			c->driver_label = true;
			continue;
		}
		enum gf_metric m = gf_metric_by_name(name);
		if (m == GF_M_COUNT) {
			if (c->nskipped < 64) {
				c->skipped_line[c->nskipped] = lineno;
				gf_note(c->skipped[c->nskipped++],
					sizeof(c->skipped[0]), "%s", name);
			}
			continue;
		}
		if (strcmp(type, defs[m].type) != 0) {
			rc = gf_err_set(
				e, GF_EPARSE,
				"%s:%d: %s is a %s in dcgm-exporter, not "
				"a %s",
				path, lineno, name, defs[m].type, type);
			break;
		}
		bool dup = false;
		for (int i = 0; i < c->n; i++)
			dup |= c->order[i] == m;
		if (!dup)
			c->order[c->n++] = m;
	}
	fclose(f);
	if (rc == 0 && c->n == 0)
		rc = gf_err_set(e, GF_EPARSE,
				"%s: no metric gpufleet collects is listed",
				path);
	return rc;
}
