/*
 * perfcast's stand-in for Caliper's ConfigManager (C++): it accepts and ignores configurations so
 * that programs which set up Caliper measurement build unchanged; perfcast records the regions.
 */
#ifndef PERFCAST_CALI_MANAGER_H
#define PERFCAST_CALI_MANAGER_H

#include "cali.h"

#include <string>

namespace cali {
class ConfigManager {
  public:
    ConfigManager() = default;
    explicit ConfigManager(const char *) {}
    bool add(const char *) { return true; }
    void set_default_parameter(const char *, const char *) {}
    bool error() const { return false; }
    std::string error_msg() const { return std::string(); }
    void start() {}
    void stop() {}
    void flush() {}
};
} // namespace cali

#endif /* PERFCAST_CALI_MANAGER_H */
