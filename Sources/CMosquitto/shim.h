// libmosquitto (apt libmosquitto-dev), used only by AklocMQTT.
//
// Loaded with dlopen the first time an MQTT connection is made, not linked:
// libmosquitto pulls in libssl and libcrypto, about 2 MB of resident memory
// in every aklocd, and most run without `[mqtt]` (issue 19). The header
// gives the types and constants; the calls go through `akloc_mosquitto()`,
// a table of the functions AklocMQTT uses, typed from the header itself so
// the compiler checks every call as if it were linked.
#include <dlfcn.h>
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <stddef.h>

#define AKLOC_MOSQUITTO_LIBRARY "libmosquitto.so.1"

struct akloc_mosquitto_api {
    __typeof__(mosquitto_lib_init) *_Nonnull lib_init;
    __typeof__(mosquitto_new) *_Nonnull new_;
    __typeof__(mosquitto_destroy) *_Nonnull destroy;
    __typeof__(mosquitto_connect_async) *_Nonnull connect_async;
    __typeof__(mosquitto_connect_bind_v5) *_Nonnull connect_bind_v5;
    __typeof__(mosquitto_disconnect) *_Nonnull disconnect;
    __typeof__(mosquitto_socket) *_Nonnull socket;
    __typeof__(mosquitto_publish) *_Nonnull publish;
    __typeof__(mosquitto_publish_v5) *_Nonnull publish_v5;
    __typeof__(mosquitto_property_add_int32) *_Nonnull property_add_int32;
    __typeof__(mosquitto_property_free_all) *_Nonnull property_free_all;
    __typeof__(mosquitto_subscribe) *_Nonnull subscribe;
    __typeof__(mosquitto_loop_read) *_Nonnull loop_read;
    __typeof__(mosquitto_loop_write) *_Nonnull loop_write;
    __typeof__(mosquitto_loop_misc) *_Nonnull loop_misc;
    __typeof__(mosquitto_want_write) *_Nonnull want_write;
    __typeof__(mosquitto_connect_with_flags_callback_set) *_Nonnull connect_with_flags_callback_set;
    __typeof__(mosquitto_disconnect_callback_set) *_Nonnull disconnect_callback_set;
    __typeof__(mosquitto_publish_callback_set) *_Nonnull publish_callback_set;
    __typeof__(mosquitto_message_callback_set) *_Nonnull message_callback_set;
    __typeof__(mosquitto_int_option) *_Nonnull int_option;
    __typeof__(mosquitto_username_pw_set) *_Nonnull username_pw_set;
    __typeof__(mosquitto_tls_set) *_Nonnull tls_set;
    __typeof__(mosquitto_will_set) *_Nonnull will_set;
    __typeof__(mosquitto_connack_string) *_Nonnull connack_string;
    __typeof__(mosquitto_reason_string) *_Nonnull reason_string;
    __typeof__(mosquitto_strerror) *_Nonnull strerror_;
};

// The table once libmosquitto is loaded and every symbol found, else NULL
// (then `akloc_mosquitto_error()` says why). Only AklocMQTT includes this
// header, so its one copy of the static state is the process's.
static inline const struct akloc_mosquitto_api *akloc_mosquitto_load(const char **error) {
    static struct akloc_mosquitto_api api;
    static int state = 0;  // 0 not tried, 1 loaded, -1 failed
    static char reason[256];
    if (state == 0) {
        void *handle = dlopen(AKLOC_MOSQUITTO_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        const char *missing = NULL;
        if (handle == NULL) {
            const char *text = dlerror();
            missing = text != NULL ? text : AKLOC_MOSQUITTO_LIBRARY ": cannot be loaded";
        } else {
#define AKLOC_MOSQUITTO_SYMBOL(field, name) \
    if (missing == NULL && (*(void **)&api.field = dlsym(handle, #name)) == NULL) missing = #name;
            AKLOC_MOSQUITTO_SYMBOL(lib_init, mosquitto_lib_init)
            AKLOC_MOSQUITTO_SYMBOL(new_, mosquitto_new)
            AKLOC_MOSQUITTO_SYMBOL(destroy, mosquitto_destroy)
            AKLOC_MOSQUITTO_SYMBOL(connect_async, mosquitto_connect_async)
            AKLOC_MOSQUITTO_SYMBOL(connect_bind_v5, mosquitto_connect_bind_v5)
            AKLOC_MOSQUITTO_SYMBOL(disconnect, mosquitto_disconnect)
            AKLOC_MOSQUITTO_SYMBOL(socket, mosquitto_socket)
            AKLOC_MOSQUITTO_SYMBOL(publish, mosquitto_publish)
            AKLOC_MOSQUITTO_SYMBOL(publish_v5, mosquitto_publish_v5)
            AKLOC_MOSQUITTO_SYMBOL(property_add_int32, mosquitto_property_add_int32)
            AKLOC_MOSQUITTO_SYMBOL(property_free_all, mosquitto_property_free_all)
            AKLOC_MOSQUITTO_SYMBOL(subscribe, mosquitto_subscribe)
            AKLOC_MOSQUITTO_SYMBOL(loop_read, mosquitto_loop_read)
            AKLOC_MOSQUITTO_SYMBOL(loop_write, mosquitto_loop_write)
            AKLOC_MOSQUITTO_SYMBOL(loop_misc, mosquitto_loop_misc)
            AKLOC_MOSQUITTO_SYMBOL(want_write, mosquitto_want_write)
            AKLOC_MOSQUITTO_SYMBOL(connect_with_flags_callback_set, mosquitto_connect_with_flags_callback_set)
            AKLOC_MOSQUITTO_SYMBOL(disconnect_callback_set, mosquitto_disconnect_callback_set)
            AKLOC_MOSQUITTO_SYMBOL(publish_callback_set, mosquitto_publish_callback_set)
            AKLOC_MOSQUITTO_SYMBOL(message_callback_set, mosquitto_message_callback_set)
            AKLOC_MOSQUITTO_SYMBOL(int_option, mosquitto_int_option)
            AKLOC_MOSQUITTO_SYMBOL(username_pw_set, mosquitto_username_pw_set)
            AKLOC_MOSQUITTO_SYMBOL(tls_set, mosquitto_tls_set)
            AKLOC_MOSQUITTO_SYMBOL(will_set, mosquitto_will_set)
            AKLOC_MOSQUITTO_SYMBOL(connack_string, mosquitto_connack_string)
            AKLOC_MOSQUITTO_SYMBOL(reason_string, mosquitto_reason_string)
            AKLOC_MOSQUITTO_SYMBOL(strerror_, mosquitto_strerror)
#undef AKLOC_MOSQUITTO_SYMBOL
        }
        if (missing != NULL) {
            size_t length = 0;
            while (missing[length] != '\0' && length + 1 < sizeof reason) {
                reason[length] = missing[length];
                length++;
            }
            reason[length] = '\0';
            if (handle != NULL) dlclose(handle);
            state = -1;
        } else {
            api.lib_init();
            state = 1;
        }
    }
    if (state < 0) {
        if (error != NULL) *error = reason;
        return NULL;
    }
    return &api;
}
