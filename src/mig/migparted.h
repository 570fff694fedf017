/*
 * migparted.h - NVIDIA mig-parted configuration files (schema v1):
 * read (util/yaml), check against the MIG rules, and write.
 *
 *   version: v1
 *   mig-configs:
 *     <name>:
 *       - device-filter: "0x20B010DE" | ["0x...", ...]   (optional; also
 *           "0x233010DE:0x16C010DE" with a subsystem id, and any other
 *           string, which matches no GPU, as in mig-parted)
 *         devices: all | [0, 1, ...]
 *         mig-enabled: true | false
 *         mig-devices: { "1g.10gb": 2, ... }   (required when enabled)
 *
 * A Kubernetes ConfigMap holding such a file under data."config.yaml" (as
 * the GPU Operator ships it) is read too; line numbers stay the file's.
 * So is a multi-document manifest (NVIDIA's nvidia-mig-manager-example
 * files): its one such ConfigMap (or one plain config), the other
 * documents skipped.  An empty file, or `version: v1` alone, has no
 * configs (mig-parted accepts both).
 */
#ifndef GF_MIG_MIGPARTED_H
#define GF_MIG_MIGPARTED_H

#include <stdbool.h>
#include <stdint.h>

#include <gpufleet/err.h>

#include "util/buf.h"

#define GF_MP_MAX_FILTERS 16
#define GF_MP_MAX_DEVICES 64
#define GF_MP_MAX_MDEV	  16
#define GF_MP_MAX_FILE	  (16u << 20)

struct gf_mp_mdev {
	char name[40];
	int count;
	int line;
};

/* One device-filter string, read as mig-parted reads it
 * (types.NewDeviceIDFromString: "<devicevendor>[:<subdevicevendor>]",
 * each a 32-bit number in Go's base-prefixed syntax).  One that does not
 * read so (a model name) matches no GPU. */
struct gf_mp_filter {
	char text[48]; /* as written (cut when longer) */
	int line;
	bool is_id;
	bool has_sub;
	uint16_t device, vendor, sub_device, sub_vendor;
};

/* Does filter f select a GPU of PCI device/vendor id and subsystem id
 * subsys (NVML's pciSubSystemId, 0 when unknown)?  mig-parted's
 * DeviceID.Matches: the device and vendor ids, and the subsystem id too
 * when the filter has one. */
bool gf_mp_filter_matches(const struct gf_mp_filter *f, uint16_t device,
			  uint16_t vendor, uint32_t subsys);

struct gf_mp_entry {
	int line;
	struct gf_mp_filter filters[GF_MP_MAX_FILTERS];
	int nfilters;
	bool all_devices;
	int devices[GF_MP_MAX_DEVICES];
	int ndevices;
	bool mig_enabled;
	struct gf_mp_mdev mdev[GF_MP_MAX_MDEV];
	int nmdev;
};

struct gf_mp_config {
	char name[96];
	char path[256]; /* the file's, for messages */
	int line;
	struct gf_mp_entry *entries;
	int n;
};

struct gf_mp_file {
	char path[256];
	struct gf_mp_config *configs;
	int n;
};

/* Read and check the schema; e->msg is "file:line: what".  On error the
 * file is released. */
int gf_mp_read(const char *path, struct gf_mp_file *f,
	       struct gf_err *e) GF_MUST_CHECK;
void gf_mp_release(struct gf_mp_file *f);
const struct gf_mp_config *gf_mp_find(const struct gf_mp_file *f,
				      const char *name);

/*
 * Check every entry against the MIG rules of the GPUs it names (by
 * device-filter; without one, against every model that has its
 * profiles).  Appends one line per problem to out ("file:line: error: ...",
 * "... warning: ..." or "... note: ..."); returns the number of errors.
 * Errors: a profile no GPU has (neither in our tables nor in the names
 * NVIDIA's configs use for GPUs we have no table for), instances that no
 * model can hold together.  Warnings: GPUs without a table here (checked
 * by name, or by form when unknown); a device-filter that selects no GPU
 * (not a device id, or not NVIDIA's vendor id).  Notes (not counted): an entry
 * without a filter that is valid on some models only, naming them.
 */
int gf_mp_validate(const struct gf_mp_file *f, struct gf_buf *out,
		   int *warnings);

#endif
