#pragma once
namespace cordon {
// "cordon 0.1.0"
const char* version_string();
}  // namespace cordon
