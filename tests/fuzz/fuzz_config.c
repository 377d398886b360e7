/* The INI configuration (DESIGN.md): parse, then resolve routes as main does. */
#include <string.h>

#include "core/config.h"
#include "core/util.h"
#include "tests/fuzz/fuzz.h"
#include "io/conffile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the parser takes a C string: stop at the first NUL as a file read would not,
     * but a config with a NUL byte is not text anyway */
    char *text = bt_xmalloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    struct bt_config c;
    char err[512] = "";
    bt_config_init(&c);
    bool ok = bt_config_parse_string(&c, text, "fuzz.conf", err, sizeof err);
    FUZZ_NEED_ERR(ok, err);
    if (ok) {
        bt_config_finish(&c);
        for (int i = 0; i < c.nroutes; i++)
            (void)bt_config_find_route(&c, c.routes[i].name);
    }
    bt_config_free(&c);
    free(text);
    return 0;
}
