# The device's Python set-up, sourced by this folder's scripts (from the repository root): the carried wheels (.whl:
# NumPy 2.4.6, which numba-cuda 0.30.4 needs, and Snakemake) into /tmp/site, and what every gpusp run there needs.
# (once a machine: lanes.sh's calls run side by side and must not reinstall under each other)
[ -n "${GPUSP_SITE_READY:-}" ] ||
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export GPUSP_SITE_READY=1 PYTHONPATH=/tmp/site:$PWD/src NUMBA_ENABLE_CUDASIM=0 PYTHONUNBUFFERED=1 \
    NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/numba-cache} \
    NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS=0
export GPUSP_MIRROR=${GPUSP_MIRROR:-$PWD/.devdata} GPUSP_COMMIT=${GPUSP_COMMIT:-unknown}
