/*
 * mig_catalog.c - GPU-instance profiles per MIG-capable model, from
 * reference/mig-and-metrics.md 1.4 (NVIDIA's MIG user guide and real
 * `nvidia-smi mig -lgip/-lgipp` output; shared/reference/mig/
 * gi-profiles.csv has every row's status and sources).  Rows the
 * reference marks inferred or unverified put `uncertain` on the model;
 * apply trusts NVML's own answers over this table.  SM counts and GiB the
 * reference could not confirm are 0 (shown as "?"), never guessed.
 */
#include <string.h>
#include <strings.h>

#include <gpufleet/mig.h>

/* Placement rules by class (8 memory slices). */
#define S1   0x7f /* 0..6 */
#define S1X2 0x55 /* 0,2,4,6 */
#define S2   0x15 /* 0,2,4 */
#define S3   0x11 /* 0,4 */
#define S4   0x01
#define S7   0x01

/*
 * A model of 8 memory slices and 7 SM slices: its seven profiles, one per
 * class below, each from a (name, SMs, GiB) of the model but 1g+me, which
 * is 1g's with "+me" on the name (the fields of struct gf_mig_profile, in
 * order).  PCI(...): its device ids.
 */
#define PCI(...)            \
	{                   \
		__VA_ARGS__ \
	}
#define NAME(n, sm, gib) n
#define SMS(n, sm, gib)	 sm
#define GIB(n, sm, gib)	 gib
/* clang-format off */
#define MODEL8(id, label, pci, uncertain, p1, p1x2, p2, p3, p4, p7)           \
	{ id, label, pci, 8, 7, uncertain, 7, {                                \
	{ NAME p1, GF_MIG_1G, false, 0x0, 19, 1, 1, S1, 7, SMS p1, GIB p1 },   \
	{ NAME p1 "+me", GF_MIG_1G, true, 0x7, 20, 1, 1, S1, 1,                \
	  SMS p1, GIB p1 },                                                    \
	{ NAME p1x2, GF_MIG_1G2X, false, 0x9, 15, 1, 2, S1X2, 4,               \
	  SMS p1x2, GIB p1x2 },                                                \
	{ NAME p2, GF_MIG_2G, false, 0x1, 14, 2, 2, S2, 3, SMS p2, GIB p2 },   \
	{ NAME p3, GF_MIG_3G, false, 0x2, 9, 3, 4, S3, 2, SMS p3, GIB p3 },    \
	{ NAME p4, GF_MIG_4G, false, 0x3, 5, 4, 4, S4, 1, SMS p4, GIB p4 },    \
	{ NAME p7, GF_MIG_7G, false, 0x4, 0, 7, 8, S7, 1, SMS p7, GIB p7 } } }
/* clang-format on */

static const struct gf_mig_model models[] = {
	MODEL8("a100-40gb", "A100 40GB", PCI(0x20b0, 0x20b1, 0x20f1, 0x20f6),
	       false, ("1g.5gb", 14, 4.75f), ("1g.10gb", 14, 9.62f),
	       ("2g.10gb", 28, 9.62f), ("3g.20gb", 42, 19.5f),
	       ("4g.20gb", 56, 19.5f), ("7g.40gb", 98, 39.25f)),
	MODEL8("a100-80gb", "A100 80GB", PCI(0x20b2, 0x20b5, 0x20f3, 0x20f5),
	       true, ("1g.10gb", 14, 9.75f), ("1g.20gb", 14, 19.5f),
	       ("2g.20gb", 28, 19.5f), ("3g.40gb", 42, 39.25f),
	       ("4g.40gb", 56, 39.25f), ("7g.80gb", 98, 79.25f)),
	MODEL8("h100-80gb", "H100 80GB (SXM5, PCIe)",
	       PCI(0x2330, 0x2331, 0x2322, 0x2324), false,
	       ("1g.10gb", 16, 9.75f), ("1g.20gb", 26, 19.62f),
	       ("2g.20gb", 32, 19.62f), ("3g.40gb", 60, 39.5f),
	       ("4g.40gb", 64, 39.5f), ("7g.80gb", 132, 79.25f)),
	MODEL8("h100-nvl", "H100 NVL 94GB", PCI(0x2321, 0x233a), false,
	       ("1g.12gb", 16, 10.75f), ("1g.24gb", 26, 21.62f),
	       ("2g.24gb", 32, 21.62f), ("3g.47gb", 60, 46.38f),
	       ("4g.47gb", 64, 46.38f), ("7g.94gb", 132, 93.12f)),
	MODEL8("h100-96gb", "H100 96GB (GH200 96GB, H20)",
	       PCI(0x2342, 0x233d, 0x20b6, 0x2329), true, ("1g.12gb", 0, 0),
	       ("1g.24gb", 0, 0), ("2g.24gb", 0, 0), ("3g.48gb", 0, 0),
	       ("4g.48gb", 0, 0), ("7g.96gb", 0, 0)),
	/* H200: as a real one's driver states it (shared/fixtures/h200:
	 * nvml-dump.json memorySizeMB / 1024, nvidia-smi mig -lgip and
	 * -lgipp), which test_mig checks; every row seen, so not uncertain.
	 * The reference's 32.25/69.5/139.75 GiB do not match that driver
	 * (580.159.04). */
	MODEL8("h200", "H200 141GB (SXM5, NVL)", PCI(0x2335, 0x233b), false,
	       ("1g.18gb", 16, 16.0f), ("1g.35gb", 26, 32.5f),
	       ("2g.35gb", 32, 32.5f), ("3g.71gb", 60, 69.75f),
	       ("4g.71gb", 64, 69.75f), ("7g.141gb", 132, 140.0f)),
	MODEL8("gh200-144gb", "GH200 144GB HBM3e", PCI(0x2348), true,
	       ("1g.18gb", 16, 17.5f), ("1g.36gb", 26, 35.25f),
	       ("2g.36gb", 32, 35.25f), ("3g.72gb", 0, 0), ("4g.72gb", 0, 0),
	       ("7g.144gb", 0, 0)),
	MODEL8("b200", "B200 180GB", PCI(0x2901), true, ("1g.23gb", 18, 22.0f),
	       ("1g.45gb", 30, 44.25f), ("2g.45gb", 36, 44.25f),
	       ("3g.90gb", 0, 0), ("4g.90gb", 0, 0), ("7g.180gb", 0, 0)),
	{ "a30",
	  "A30 24GB",
	  { 0x20b7 },
	  4,
	  4,
	  false,
	  5,
	  { { "1g.6gb", GF_MIG_1G, false, 0x0, 14, 1, 1, 0x0f, 4, 14, 5.81f },
	    { "1g.6gb+me", GF_MIG_1G, true, 0x7, 21, 1, 1, 0x0f, 1, 14, 5.81f },
	    { "2g.12gb", GF_MIG_2G, false, 0x1, 5, 2, 2, 0x05, 2, 28, 11.69f },
	    { "2g.12gb+me", GF_MIG_2G, true, 0x8, 6, 2, 2, 0x05, 1, 28,
	      11.69f },
	    { "4g.24gb", GF_MIG_4G, false, 0x3, 0, 4, 4, 0x01, 1, 56,
	      23.44f } } },
};

#define NMODELS ((int)(sizeof(models) / sizeof(models[0])))

static const struct {
	const char *alias, *id;
} aliases[] = {
	{ "h100-sxm", "h100-80gb" }, { "h100-pcie", "h100-80gb" },
	{ "h100", "h100-80gb" },     { "gh200", "gh200-144gb" },
	{ "a100", "a100-40gb" },     { "h200-nvl", "h200" },
};

int gf_mig_model_count(void)
{
	return NMODELS;
}

const struct gf_mig_model *gf_mig_model_at(int i)
{
	return i >= 0 && i < NMODELS ? &models[i] : NULL;
}

const struct gf_mig_model *gf_mig_model_by_id(const char *id)
{
	for (size_t a = 0; a < sizeof(aliases) / sizeof(aliases[0]); a++)
		if (strcasecmp(id, aliases[a].alias) == 0)
			id = aliases[a].id;
	for (int i = 0; i < NMODELS; i++)
		if (strcasecmp(models[i].id, id) == 0)
			return &models[i];
	return NULL;
}

const struct gf_mig_model *gf_mig_model_by_pci(uint16_t device_id)
{
	for (int i = 0; i < NMODELS; i++)
		for (int k = 0; k < GF_MIG_MAX_PCI_IDS && models[i].pci_ids[k];
		     k++)
			if (models[i].pci_ids[k] == device_id)
				return &models[i];
	return NULL;
}

int gf_mig_profile_find(const struct gf_mig_model *m, const char *name)
{
	for (int i = 0; i < m->nprofiles; i++)
		if (strcmp(m->profiles[i].name, name) == 0)
			return i;
	return -1;
}

int gf_mig_profile_units(const char *name)
{
	int units = 0;
	for (int i = 0; i < NMODELS; i++) {
		int p = gf_mig_profile_find(&models[i], name);
		if (p >= 0 && (units == 0 || models[i].profiles[p].mem < units))
			units = models[i].profiles[p].mem;
	}
	return units;
}

/* Profile names of GPUs without a table here, as NVIDIA's own configs
 * spell them (the attributes +me, +me.all, -me, +gfx included). */
static const char *const gb200_names[] = {
	"1g.23gb", "1g.23gb+me", "1g.24gb", /* an earlier board revision */
	"1g.47gb", "2g.47gb",	 "3g.93gb", "4g.93gb", "7g.186gb", NULL,
};
static const char *const rtxpro6000_names[] = {
	"1g.24gb",    "1g.24gb+me", "1g.24gb+gfx", "1g.24gb+me.all",
	"1g.24gb-me", "2g.48gb",    "2g.48gb+gfx", "2g.48gb+me.all",
	"2g.48gb-me", "4g.96gb",    "4g.96gb+gfx", NULL,
};
static const char *const b300_names[] = {
	"1g.34gb",  "1g.34gb+me", "1g.67gb",  "2g.67gb",
	"3g.135gb", "4g.135gb",	  "7g.269gb", NULL,
};
static const char *const gb300_names[] = {
	"1g.35gb",  "1g.35gb+me", "1g.70gb",  "2g.70gb",
	"3g.139gb", "4g.139gb",	  "7g.278gb", NULL,
};
static const char *const unnamed_names[] = {
	"3g.95gb",
	"4g.95gb",
	"7g.189gb",
	NULL,
};

static const struct gf_mig_untabled untabled[] = {
	{ "GB200 HGX", { 0x2941 }, gb200_names },
	{ "RTX PRO 6000 Blackwell", { 0x2bb5 }, rtxpro6000_names },
	{ "B300", { 0x3182 }, b300_names },
	{ "GB300", { 0x31c2 }, gb300_names },
	/* in NVIDIA's files without a GPU named next to them */
	{ "a Blackwell GPU NVIDIA's files leave unnamed",
	  { 0 },
	  unnamed_names },
};

#define NUNTABLED ((int)(sizeof(untabled) / sizeof(untabled[0])))

int gf_mig_untabled_count(void)
{
	return NUNTABLED;
}

const struct gf_mig_untabled *gf_mig_untabled_at(int i)
{
	return i >= 0 && i < NUNTABLED ? &untabled[i] : NULL;
}

const struct gf_mig_untabled *gf_mig_untabled_by_pci(uint16_t device_id)
{
	for (int i = 0; i < NUNTABLED; i++)
		for (int k = 0;
		     k < GF_MIG_MAX_PCI_IDS && untabled[i].pci_ids[k]; k++)
			if (untabled[i].pci_ids[k] == device_id)
				return &untabled[i];
	return NULL;
}

bool gf_mig_untabled_has(const struct gf_mig_untabled *u, const char *name)
{
	for (int i = 0; u->profiles[i]; i++)
		if (strcmp(u->profiles[i], name) == 0)
			return true;
	return false;
}
