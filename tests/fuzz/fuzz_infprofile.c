/* GetInferenceProfile answers (Bedrock control plane), then the ARN helpers on
 * whatever model ARN the answer named. */
#include <string.h>

#include "collectors/infprofile.h"
#include "tests/fuzz/fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct bt_infprofile ip;
    char err[160] = "";
    bool ok = bt_infprofile_parse((const char *)data, size, &ip, err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    if (ok && !ip.base_model[0])
        abort(); /* a success always names the model */
    char text[512], path[2048], region[32];
    size_t n = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, n);
    text[n] = '\0';
    (void)bt_infprofile_is_arn(text);
    bt_infprofile_arn_region(text, region, sizeof region);
    bt_infprofile_path(text, path, sizeof path);
    if (strncmp(path, "/inference-profiles/", 20) != 0 || strchr(path + 20, '/') || strchr(path, ':'))
        abort(); /* the identifier is one encoded path segment */
    return 0;
}
