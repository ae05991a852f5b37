#include "cordon/jail.hpp"

namespace cordon {

std::vector<IdMap> uid_maps(const Spec& spec) { return {IdMap{spec.uid, spec.host_uid, 1}}; }
std::vector<IdMap> gid_maps(const Spec& spec) { return {IdMap{spec.gid, spec.host_gid, 1}}; }

std::string format_id_map(const std::vector<IdMap>& maps) {
    std::string out;
    for (const auto& m : maps) {
        out += std::to_string(m.inside) + " " + std::to_string(m.outside) + " " + std::to_string(m.count) + "\n";
    }
    return out;
}

}  // namespace cordon
