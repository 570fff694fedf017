/*
 * catalog.c - the GPU model table.
 *
 * Sources: NVIDIA data sheets and product briefs for memory, NVLink
 * generation and link count, MIG support and TDP; the PCI ID repository
 * for device ids.  NVLink per-link bandwidth is per direction (NVLink 1:
 * 20 GB/s, 2-4: 25 GB/s, 5: 50 GB/s), which is also how hwloc's
 * "NVLinkBandwidth" distance matrix counts it.  Later issues extend the
 * entries (MIG profiles, prices); keep the table sorted by architecture.
 */
#include <stddef.h>
#include <strings.h>

#include <gpufleet/catalog.h>
#include <gpufleet/err.h>

#define NVIDIA 0x10de

static const struct gf_gpu_model catalog[] = {
	{ "p100-sxm2",
	  "Tesla P100-SXM2-16GB",
	  GF_ARCH_PASCAL,
	  NVIDIA,
	  { 0x15f9 },
	  16384,
	  1,
	  4,
	  20,
	  GF_NVLINK_MESH,
	  false,
	  0,
	  300,
	  "Tesla-P100-SXM2-16GB",
	  { NULL } },
	{ "p100-pcie",
	  "Tesla P100-PCIE-16GB",
	  GF_ARCH_PASCAL,
	  NVIDIA,
	  { 0x15f7, 0x15f8 },
	  16384,
	  0,
	  0,
	  0,
	  GF_NVLINK_NONE,
	  false,
	  0,
	  250,
	  "Tesla-P100-PCIE-16GB",
	  { "P100" } },
	{ "v100-16gb",
	  "Tesla V100-SXM2-16GB",
	  GF_ARCH_VOLTA,
	  NVIDIA,
	  { 0x1db1, 0x1db4 },
	  16384,
	  2,
	  6,
	  25,
	  GF_NVLINK_MESH,
	  false,
	  0,
	  300,
	  "Tesla-V100-SXM2-16GB",
	  { "V100M16", "V100" } },
	{ "v100-32gb",
	  "Tesla V100-SXM2-32GB",
	  GF_ARCH_VOLTA,
	  NVIDIA,
	  { 0x1db5, 0x1db6, 0x1df6 },
	  32768,
	  2,
	  6,
	  25,
	  GF_NVLINK_MESH,
	  false,
	  0,
	  300,
	  "Tesla-V100-SXM2-32GB",
	  { "V100M32" } },
	{ "v100-sxm3-32gb",
	  "Tesla V100-SXM3-32GB-H",
	  GF_ARCH_VOLTA,
	  NVIDIA,
	  { 0x1db8, 0x1db7 },
	  32768,
	  2,
	  6,
	  25,
	  GF_NVLINK_SWITCH,
	  false,
	  0,
	  450,
	  "Tesla-V100-SXM3-32GB-H",
	  { NULL } },
	{ "t4",
	  "Tesla T4",
	  GF_ARCH_TURING,
	  NVIDIA,
	  { 0x1eb8 },
	  16384,
	  0,
	  0,
	  0,
	  GF_NVLINK_NONE,
	  false,
	  0,
	  70,
	  "Tesla-T4",
	  { NULL } },
	{ "a100-40gb",
	  "NVIDIA A100-SXM4-40GB",
	  GF_ARCH_AMPERE,
	  NVIDIA,
	  { 0x20b0, 0x20f1 },
	  40960,
	  3,
	  12,
	  25,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  400,
	  "NVIDIA-A100-SXM4-40GB",
	  { NULL } },
	{ "a100-80gb",
	  "NVIDIA A100-SXM4-80GB",
	  GF_ARCH_AMPERE,
	  NVIDIA,
	  { 0x20b2, 0x20b5 },
	  81920,
	  3,
	  12,
	  25,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  400,
	  "NVIDIA-A100-SXM4-80GB",
	  { NULL } },
	{ "a30",
	  "NVIDIA A30",
	  GF_ARCH_AMPERE,
	  NVIDIA,
	  { 0x20b7 },
	  24576,
	  3,
	  4,
	  25,
	  GF_NVLINK_BRIDGE,
	  true,
	  4,
	  165,
	  "NVIDIA-A30",
	  { NULL } },
	{ "a10",
	  "NVIDIA A10",
	  GF_ARCH_AMPERE,
	  NVIDIA,
	  { 0x2236, 0x2237 },
	  24576,
	  0,
	  0,
	  0,
	  GF_NVLINK_NONE,
	  false,
	  0,
	  150,
	  "NVIDIA-A10",
	  { NULL } },
	{ "l4",
	  "NVIDIA L4",
	  GF_ARCH_ADA,
	  NVIDIA,
	  { 0x27b8 },
	  24576,
	  0,
	  0,
	  0,
	  GF_NVLINK_NONE,
	  false,
	  0,
	  72,
	  "NVIDIA-L4",
	  { NULL } },
	{ "l40s",
	  "NVIDIA L40S",
	  GF_ARCH_ADA,
	  NVIDIA,
	  { 0x26b9 },
	  49152,
	  0,
	  0,
	  0,
	  GF_NVLINK_NONE,
	  false,
	  0,
	  350,
	  "NVIDIA-L40S",
	  { NULL } },
	{ "h100-sxm",
	  "NVIDIA H100 80GB HBM3",
	  GF_ARCH_HOPPER,
	  NVIDIA,
	  { 0x2330 },
	  81920,
	  4,
	  18,
	  25,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  700,
	  "NVIDIA-H100-80GB-HBM3",
	  { "h100-80gb" } },
	{ "h100-pcie",
	  "NVIDIA H100 PCIe",
	  GF_ARCH_HOPPER,
	  NVIDIA,
	  { 0x2331 },
	  81920,
	  4,
	  12,
	  25,
	  GF_NVLINK_BRIDGE,
	  true,
	  7,
	  350,
	  "NVIDIA-H100-PCIe",
	  { NULL } },
	{ "h100-nvl",
	  "NVIDIA H100 NVL",
	  GF_ARCH_HOPPER,
	  NVIDIA,
	  { 0x2321 },
	  95830,
	  4,
	  12,
	  25,
	  GF_NVLINK_BRIDGE,
	  true,
	  7,
	  400,
	  "NVIDIA-H100-NVL",
	  { NULL } },
	{ "h200",
	  "NVIDIA H200",
	  GF_ARCH_HOPPER,
	  NVIDIA,
	  { 0x2335, 0x233b },
	  144384,
	  4,
	  18,
	  25,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  700,
	  "NVIDIA-H200",
	  { NULL } },
	{ "gh200",
	  "NVIDIA GH200 480GB",
	  GF_ARCH_HOPPER,
	  NVIDIA,
	  { 0x2342, 0x2348 },
	  98304,
	  4,
	  18,
	  25,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  1000,
	  "NVIDIA-GH200-480GB",
	  { NULL } },
	{ "b200",
	  "NVIDIA B200",
	  GF_ARCH_BLACKWELL,
	  NVIDIA,
	  { 0x2901 },
	  184320,
	  5,
	  18,
	  50,
	  GF_NVLINK_SWITCH,
	  true,
	  7,
	  1000,
	  "NVIDIA-B200",
	  { NULL } },
};

#define CATALOG_N ((int)(sizeof(catalog) / sizeof(catalog[0])))

int gf_catalog_count(void)
{
	return CATALOG_N;
}

const struct gf_gpu_model *gf_catalog_at(int i)
{
	if (i < 0 || i >= CATALOG_N)
		return NULL;
	return &catalog[i];
}

const struct gf_gpu_model *gf_catalog_by_id(const char *id)
{
	for (int i = 0; i < CATALOG_N; i++)
		if (strcasecmp(catalog[i].id, id) == 0)
			return &catalog[i];
	return NULL;
}

const struct gf_gpu_model *gf_catalog_by_pci(uint16_t vendor, uint16_t device)
{
	for (int i = 0; i < CATALOG_N; i++) {
		if (catalog[i].vendor_id != vendor)
			continue;
		for (int j = 0; j < GF_GPU_MAX_PCI_IDS; j++) {
			if (catalog[i].pci_device_ids[j] == 0)
				break;
			if (catalog[i].pci_device_ids[j] == device)
				return &catalog[i];
		}
	}
	return NULL;
}

const struct gf_gpu_model *gf_catalog_by_name(const char *name)
{
	for (int i = 0; i < CATALOG_N; i++)
		if (strcasecmp(catalog[i].name, name) == 0)
			return &catalog[i];
	return NULL;
}

int gf_catalog_gfd_product(const char *nvml, char *out, size_t size)
{
	size_t n = 0;
	for (; *nvml; nvml++) {
		if (n + 1 >= size)
			return GF_ETOOBIG;
		out[n++] = *nvml == ' ' ? '-' : *nvml;
	}
	if (size == 0)
		return GF_ETOOBIG;
	out[n] = '\0';
	return 0;
}

/* One character of a name as lookups compare it. */
static int fold(char ch)
{
	if (ch == ' ' || ch == '_')
		return '-';
	return ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch;
}

static bool name_is(const char *a, const char *b)
{
	if (!a || !b)
		return false;
	while (*a && fold(*a) == fold(*b))
		a++, b++;
	return *a == '\0' && *b == '\0';
}

const struct gf_gpu_model *gf_catalog_lookup(const char *name)
{
	if (!name || !*name)
		return NULL;
	for (int i = 0; i < CATALOG_N; i++) {
		const struct gf_gpu_model *m = &catalog[i];
		if (name_is(m->id, name) || name_is(m->name, name) ||
		    name_is(m->gfd_product, name))
			return m;
		for (int k = 0; k < GF_GPU_MAX_ALIASES && m->aliases[k]; k++)
			if (name_is(m->aliases[k], name))
				return m;
	}
	return NULL;
}

bool gf_catalog_same(const char *a, const char *b)
{
	if (strcasecmp(a, b) == 0)
		return true;
	const struct gf_gpu_model *m = gf_catalog_lookup(a);
	return m && m == gf_catalog_lookup(b);
}

const char *gf_gpu_arch_name(enum gf_gpu_arch arch)
{
	static const char *const names[] = {
		"unknown", "pascal", "volta",  "turing",
		"ampere",  "ada",    "hopper", "blackwell",
	};
	if ((unsigned)arch >= sizeof(names) / sizeof(names[0]))
		return "unknown";
	return names[arch];
}
