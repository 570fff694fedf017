/*
 * old_driver.c - a libnvidia-ml.so.1 with only the four entry points
 * gpufleet requires (init, shutdown, count, handle by index), standing for
 * a driver older than every optional call.  One GPU, no other answers.
 */
#include "topo/nvml_api.h"

/* exported under NVML's names; no header declares them here */
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlShutdown(void);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device);

nvmlReturn_t nvmlInit_v2(void)
{
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void)
{
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
	*count = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
					   nvmlDevice_t *device)
{
	static int gpu0;
	if (index != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = (nvmlDevice_t)&gpu0;
	return NVML_SUCCESS;
}
