"""A tiny PyTorch training run: fits y = 3x + 2 with one Linear layer.

It is what gpu-preflight execs once its checks pass; it prints the device
PyTorch trained on so a run's log shows both sides (the preflight's verdict
on stderr, the framework's own view on stdout).
"""

import torch


def main():
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    x = torch.rand(256, 1, device=device)
    y = 3 * x + 2
    model = torch.nn.Linear(1, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for step in range(200):
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 50 == 0:
            print(f"step {step} loss {loss.item():.5f}", flush=True)

    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    print(
        f"torch {torch.__version__} cuda {torch.version.cuda} cudnn {torch.backends.cudnn.version()} "
        f"device {name} final loss {loss.item():.5f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
