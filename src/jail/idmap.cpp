#include "cordon/jail.hpp"

namespace cordon {

std::vector<IdMap> uid_maps(const Spec& spec, bool remap) {
    return {IdMap{spec.uid, remap ? kRootJailId : spec.host_uid, 1}};
}
std::vector<IdMap> gid_maps(const Spec& spec, bool remap) {
    return {IdMap{spec.gid, remap ? kRootJailId : spec.host_gid, 1}};
}

std::string format_id_map(const std::vector<IdMap>& maps) {
    std::string out;
    for (const auto& m : maps) {
        out += std::to_string(m.inside) + " " + std::to_string(m.outside) + " " + std::to_string(m.count) + "\n";
    }
    return out;
}

}  // namespace cordon
