"""A tiny PaddlePaddle training run: fits y = 3x + 2 with one Linear layer.

It is what gpu-preflight execs once its checks pass; it prints the device
Paddle trained on so a run's log shows both sides (the preflight's verdict on
stderr, the framework's own view on stdout).
"""

import paddle


def main():
    paddle.seed(0)
    device = "gpu" if paddle.device.is_compiled_with_cuda() and paddle.device.cuda.device_count() > 0 else "cpu"
    paddle.set_device(device)

    x = paddle.rand([256, 1])
    y = 3 * x + 2
    model = paddle.nn.Linear(1, 1)
    opt = paddle.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())
    for step in range(200):
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if step % 50 == 0:
            print(f"step {step} loss {float(loss):.5f}", flush=True)

    print(
        f"paddle {paddle.__version__} cuda {paddle.version.cuda()} cudnn {paddle.version.cudnn()} "
        f"device {paddle.device.get_device()} final loss {float(loss):.5f}",
        flush=True,
    )


if __name__ == "__main__":
    main()
