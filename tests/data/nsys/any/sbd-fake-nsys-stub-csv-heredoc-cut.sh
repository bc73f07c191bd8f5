#!/bin/bash
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "${SCRIPT_DIR}/../.." && pwd)

cat > "${FAKE_BIN}/nsys" <<'EOF'
#!/bin/bash
set -euo pipefail

case "${1:-}" in
  profile)
    shift
    output=""
    while [ $# -gt 0 ]; do
      case "$1" in
        -o)
          shift
          output="$1"
          ;;
        --*)
          ;;
        *)
          break
          ;;
      esac
      shift || true
    done
    test -n "$output"
    "$@" >/dev/null
    mkdir -p "$(dirname "$output")"
    printf 'fake nsys report\n' > "${output}.nsys-rep"
    ;;
  stats)
    shift
    output=""
    while [ $# -gt 0 ]; do
      case "$1" in
        --output)
          shift
          output="$1"
          ;;
      esac
      shift || true
    done
    test -n "$output"
    cat > "${output}_cuda_gpu_kern_sum.csv" <<'CSV'
CUDA Kernel Summary
"Time (%)","Total Time (ns)","Instances","Avg (ns)","Med (ns)","Min (ns)","Max (ns)","StdDev (ns)","Name"
58.5,"5,850,000",50,117000,116000,100000,130000,4000,"void sbd::MultAlphaBeta<double>(double*, double const*)"
19.2,"1,920,000",50,38400,38000,35000,42000,2000,"void sbd::MultUnified<double, (int)0, (int)1>(double*, double const*)"
17.0,"1,700,000",50,34000,33800,30000,39000,1800,"void sbd::MultUnified<double, (int)1, (int)1>(double*, double const*)"
2.7,"270,000",50,5400,5300,5000,6500,400,"void sbd::MultUnified<double, (int)0, (int)0>(double*, double const*)"
2.5,"250,000",50,5000,4900,4500,6000,350,"void sbd::MultUnified<double, (int)1, (int)0>(double*, double const*)"
CSV
    printf 'Name,Time\ncuLaunchKernel,1\n' > "${output}_cuda_api_sum.csv"
    ;;
  *)
    exit 2
    ;;
esac
EOF
