/* Shared by the libFuzzer targets: the entry point's prototype (the build
 * demands one) and a check that a failed parse said why. */
#ifndef BEDTOP_FUZZ_H
#define BEDTOP_FUZZ_H
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A parse failure must be a clear error value: an empty message is a bug. */
#define FUZZ_NEED_ERR(ok, err) \
    do {                       \
        if (!(ok) && !(err)[0]) \
            abort();           \
    } while (0)
#endif
