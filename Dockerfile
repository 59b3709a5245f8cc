# The service image: the dashboard (`autotune serve`) and tuning workers (`autotune run`).
# CPU torch by default; for NVIDIA workers build with
#   --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128 --build-arg TORCH_SPEC=torch
# (an Ascend worker needs the host's CANN and torch_npu: see README, "Running on an Ascend host").
FROM python:3.11-slim
ARG TORCH_SPEC=torch==2.13.0
ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
RUN useradd --create-home --uid 1000 autotune
WORKDIR /app
COPY pyproject.toml README.md ./
COPY autotune autotune
COPY autotuner autotuner
COPY core core
COPY ops ops
COPY storage storage
COPY api api
COPY experimental experimental
COPY frozen_configs frozen_configs
RUN pip install --no-cache-dir --extra-index-url "$TORCH_INDEX" "$TORCH_SPEC" -e '.[gpu]' \
    && chown -R autotune /app
USER autotune
ENV AUTOTUNE_ROOT=/app PYTHONUNBUFFERED=1
EXPOSE 8000
CMD ["autotune", "serve", "--host", "0.0.0.0", "--port", "8000"]
