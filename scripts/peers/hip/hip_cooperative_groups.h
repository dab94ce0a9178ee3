// HIP's cooperative-groups header on CUDA's (see hip_runtime.h beside it).
#pragma once
#include "hip_runtime.h"
#include <cooperative_groups.h>
