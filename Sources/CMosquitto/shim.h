// libmosquitto (apt libmosquitto-dev), used only by AklocMQTT.
#include <mosquitto.h>
